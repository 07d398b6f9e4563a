// pam_keychain: the login's PAM module for the keychain vault (see docs/login.md).
//
// The few PAM declarations it uses are its own (they are fixed by the PAM ABI), so that the
// package builds without libpam's headers; the module is loaded by libpam, which provides them.
#ifndef PAM_KEYCHAIN_H
#define PAM_KEYCHAIN_H

typedef struct pam_handle pam_handle_t;

int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv);
int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv);
int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv);
int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv);
int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv);

#endif
