#include "ckeyring.h"
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/keyctl.h>

int32_t ckeyring_add_user_key(const char *description, const void *payload, size_t length, int32_t keyring) {
    return (int32_t)syscall(SYS_add_key, "user", description, payload, length, keyring);
}

int32_t ckeyring_search_user_key(int32_t keyring, const char *description) {
    return (int32_t)syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, "user", description, 0);
}

long ckeyring_read(int32_t key, void *buffer, size_t length) {
    return syscall(SYS_keyctl, KEYCTL_READ, key, buffer, length, 0);
}

long ckeyring_set_permissions(int32_t key, uint32_t permissions) {
    return syscall(SYS_keyctl, KEYCTL_SETPERM, key, permissions, 0, 0);
}

long ckeyring_unlink(int32_t key, int32_t keyring) {
    return syscall(SYS_keyctl, KEYCTL_UNLINK, key, keyring, 0, 0);
}

long ckeyring_invalidate(int32_t key) {
    return syscall(SYS_keyctl, KEYCTL_INVALIDATE, key, 0, 0, 0);
}

long ckeyring_set_timeout(int32_t key, uint32_t seconds) {
    return syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, key, seconds, 0, 0);
}
