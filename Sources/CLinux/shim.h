#ifndef AZSEED_CLINUX_SHIM_H
#define AZSEED_CLINUX_SHIM_H
// Linux calls Swift's Glibc module does not export (they need _GNU_SOURCE).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <string.h>
#include <unistd.h>

/// syncfs(2): flushes the whole file system holding `fd` — one flush for many files written
/// since the last one (the emulator's group commit).
static inline int azs_syncfs(int fd) {
    return syncfs(fd);
}

/// memmem(3): the first occurrence of a byte string in another (a multipart boundary in a
/// `$batch` body), searched by libc's vectorised two-way algorithm.
static inline const void *azs_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}

/// mallopt(3) for the two thresholds that decide whether a large buffer freed goes back to
/// the kernel: allocations below `mmap_threshold` come from the heap, and the heap keeps up
/// to `trim_threshold` of free memory at its top instead of returning it.
static inline void azs_keep_large_buffers(int mmap_threshold, int trim_threshold) {
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
}

#endif
