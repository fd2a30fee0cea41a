// The translation unit that builds the tests' precompiled headers (tests/CMakeLists.txt:
// hloscope_test_pch); it holds no code of its own.
