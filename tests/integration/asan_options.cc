// AddressSanitizer options for the integration tests: freed memory is overwritten, so a use after
// free inside code ASan does not instrument (libstdc++'s tree iteration, e.g. erasing from a map
// while iterating over it) reads garbage and crashes instead of silently reading stale pointers.
// Without ASan the function is never called.
extern "C" const char* __asan_default_options() {  // NOLINT(readability-identifier-naming)
  return "max_free_fill_size=4096:free_fill_byte=255";
}
