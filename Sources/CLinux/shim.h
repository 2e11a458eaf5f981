#ifndef AZSEED_CLINUX_SHIM_H
#define AZSEED_CLINUX_SHIM_H
// Linux calls Swift's Glibc module does not export (they need _GNU_SOURCE).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

#endif
