#ifndef AZSEED_CLINUX_SHIM_H
#define AZSEED_CLINUX_SHIM_H
// Linux calls Swift's Glibc module does not export (they need _GNU_SOURCE).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <unistd.h>

/// syncfs(2): flushes the whole file system holding `fd` — one flush for many files written
/// since the last one (the emulator's group commit).
static inline int azs_syncfs(int fd) {
    return syncfs(fd);
}

#endif
