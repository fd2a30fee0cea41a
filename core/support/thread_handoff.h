// Hand-offs between threads that ThreadSanitizer cannot see.
//
// The GUI passes work to background threads and results back through Qt: queued signals and
// calls, QtConcurrent::run and QFutureWatcher. Qt orders those hand-offs with futexes and
// atomics inside libQt6Core, which is not built with TSan, so under TSan every object built
// on one side and read on the other looks like a data race. handoff::send() and
// handoff::receive() tell TSan about such a hand-off: what a thread wrote before send()
// happens before what another thread reads after a later receive(). They compile to nothing
// outside TSan builds. Qt's own copies of the handed-off values (the slot object, the task
// object, the future's result store) are in tests/sanitizers/tsan.supp instead.
//
// Use: send() after building what goes across and before the signal, queued call or task
// that carries it; receive() first thing where the other thread picks it up.
// handoff::wrap(f) does both around a function run on QtConcurrent's pool.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HLOSCOPE_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define HLOSCOPE_TSAN 1
#endif

#ifdef HLOSCOPE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace hloscope::handoff {

#ifdef HLOSCOPE_TSAN
// One synchronisation object for every hand-off: a receive() is ordered after every send()
// that came before it, which is what each of the GUI's hand-offs needs.
inline char g_token;
inline void send() { __tsan_release(&g_token); }
inline void receive() { __tsan_acquire(&g_token); }
#else
inline void send() {}
inline void receive() {}
#endif

// f wrapped for a background thread: the caller's writes so far are handed to it (send()
// now, receive() when it starts) and its writes are handed back when it returns (send()).
// The thread that takes the result calls receive() before reading it. f lives on the heap,
// made before send(): the pool thread moves the wrapper before it runs it, and a move of f
// itself would copy its const captures (a shared_ptr's reference count) before receive().
template <typename F>
auto wrap(F f) {
    auto held = std::make_shared<F>(std::move(f));
    send();
    return [held = std::move(held)](auto&&... args) {
        receive();
        F& function = *held;
        if constexpr (std::is_void_v<decltype(function(std::forward<decltype(args)>(args)...))>) {
            function(std::forward<decltype(args)>(args)...);
            send();
        } else {
            auto result = function(std::forward<decltype(args)>(args)...);
            send();
            return result;
        }
    };
}

}  // namespace hloscope::handoff
