#define _GNU_SOURCE
#include "csystem.h"
#include <sys/prctl.h>

int csystem_set_nondumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int csystem_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

// Defined by the ThreadSanitizer runtime only; null in a process built without it.
extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

void csystem_sanitizer_acquire(void *address) {
    if (__tsan_acquire) __tsan_acquire(address);
}

void csystem_sanitizer_release(void *address) {
    if (__tsan_release) __tsan_release(address);
}

int csystem_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}
