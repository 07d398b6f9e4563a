#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <spawn.h>

// Wrappers for process settings that libc reaches only through variadic calls (prctl), which
// Swift cannot call, or declares only under _GNU_SOURCE. Each returns 0, or -1 with errno set
// (posix_spawn's file actions: an error number).

// No core dumps of this process, and no ptrace or /proc/PID/mem access by other processes of
// the same user (PR_SET_DUMPABLE 0).
int csystem_set_nondumpable(void);

// 1 when the process is dumpable, 0 when not, -1 on error.
int csystem_is_dumpable(void);

// Tell ThreadSanitizer, when the process runs under it, that the lock identified by `address`
// was taken (acquire) or is being let go (release); without it they do nothing. For locks it
// cannot see by itself: Synchronization.Mutex waits on futexes, which it does not intercept.
void csystem_sanitizer_acquire(void *address);
void csystem_sanitizer_release(void *address);

// posix_spawn_file_actions_addchdir_np, which glibc's headers show only under _GNU_SOURCE: the
// child changes to `path` before it runs (a program started detached holds no directory of
// its parent's busy).
int csystem_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path);

#endif
