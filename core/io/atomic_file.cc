#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace hloscope {
namespace {

namespace fs = std::filesystem;

Status failure(const std::string& path, const std::string& what, int error) {
    return ioError("cannot write " + path + ": " + what + std::strerror(error));
}

// Writes all of `bytes` to `fd`; false with errno set on failure.
bool writeAll(int fd, std::string_view bytes) {
    const char* data = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, data, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += n;
        left -= static_cast<size_t>(n);
    }
    return true;
}

// A path that exists and is not a regular file: written in place.
Status writeInPlace(const std::string& path, std::string_view bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return failure(path, "", errno);
    if (!writeAll(fd, bytes)) {
        const int error = errno;
        ::close(fd);
        return failure(path, "", error);
    }
    if (::close(fd) != 0) return failure(path, "", errno);
    return Status::ok();
}

}  // namespace

Status writeFileAtomically(const std::string& path, std::string_view bytes) {
    if (path.empty()) return ioError("cannot write a file with an empty name");
    fs::path target(path);
    struct stat info {};
    bool exists = ::stat(path.c_str(), &info) == 0;  // follows links
    if (exists && !S_ISREG(info.st_mode)) {
        if (S_ISDIR(info.st_mode)) return failure(path, "", EISDIR);
        return writeInPlace(path, bytes);
    }
    // Replace the file a link points at, not the link.
    std::error_code error;
    if (fs::is_symlink(fs::symlink_status(target, error))) {
        const fs::path resolved = fs::weakly_canonical(target, error);
        if (!error) target = resolved;
    }
    const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();

    // A new name in the same folder (rename is atomic only within one file system).
    static std::atomic<unsigned> counter{0};
    std::string temp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        temp = (folder / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()) +
                          "." + std::to_string(counter++)))
                   .string();
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // umask applies
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return failure(path, "", errno);
    auto abandon = [&](const std::string& what) {
        const int saved = errno;
        if (fd >= 0) ::close(fd);
        ::unlink(temp.c_str());
        return failure(path, what, saved);
    };
    // The replaced file keeps its permissions.
    if (exists && ::fchmod(fd, info.st_mode & 07777) != 0) return abandon("");
    if (!writeAll(fd, bytes)) return abandon("");
    if (::fsync(fd) != 0) return abandon("fsync: ");
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0) return abandon("");
    if (::rename(temp.c_str(), target.c_str()) != 0) return abandon("rename: ");
    // The rename itself reaches the disk with the folder's metadata.
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);  // best effort: some file systems refuse a folder fsync
        ::close(dir);
    }
    return Status::ok();
}

}  // namespace hloscope
