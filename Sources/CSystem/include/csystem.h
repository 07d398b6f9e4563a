#ifndef CSYSTEM_H
#define CSYSTEM_H

// Fixed-arity wrappers for process settings that libc reaches only through variadic calls
// (prctl), which Swift cannot call. Each returns 0, or -1 with errno set.

// No core dumps of this process, and no ptrace or /proc/PID/mem access by other processes of
// the same user (PR_SET_DUMPABLE 0).
int csystem_set_nondumpable(void);

// 1 when the process is dumpable, 0 when not, -1 on error.
int csystem_is_dumpable(void);

#endif
