#ifndef CKEYRING_H
#define CKEYRING_H
#include <stddef.h>
#include <stdint.h>

// Fixed-arity wrappers around the kernel's add_key/keyctl system calls, which libc
// reaches only through the variadic syscall(2) that Swift cannot call.
// Each returns the kernel's result, or -1 with errno set.

#define CKEYRING_SPEC_USER_KEYRING (-4)
#define CKEYRING_SPEC_SESSION_KEYRING (-3)

int32_t ckeyring_add_user_key(const char *description, const void *payload, size_t length, int32_t keyring);
int32_t ckeyring_search_user_key(int32_t keyring, const char *description);
long ckeyring_read(int32_t key, void *buffer, size_t length);
long ckeyring_set_permissions(int32_t key, uint32_t permissions);
long ckeyring_unlink(int32_t key, int32_t keyring);
long ckeyring_invalidate(int32_t key);
// Expires the key `seconds` from now (0: never).
long ckeyring_set_timeout(int32_t key, uint32_t seconds);

#endif
