// A login as sshd or login(1) makes one, for the login tests: authenticates USER on the PAM
// SERVICE with the password on standard input, opens the session, and prints the environment
// the PAM stack gives the session's shells (one NAME=VALUE per line), which a login program
// exports to them. Exits 1 when PAM refuses.
//
// Usage: pam_login SERVICE USER  (password on standard input)

#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Answers every prompt with the password, as a person typing it would.
static int answer(int count, const struct pam_message **messages, struct pam_response **responses, void *password) {
    struct pam_response *replies = calloc((size_t)count, sizeof *replies);
    if (replies == NULL) return PAM_BUF_ERR;
    for (int index = 0; index < count; index++) {
        int style = messages[index]->msg_style;
        if (style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON) replies[index].resp = strdup(password);
    }
    *responses = replies;
    return PAM_SUCCESS;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    static char password[1024];
    if (fgets(password, sizeof password, stdin) == NULL) return 2;
    password[strcspn(password, "\n")] = '\0';
    struct pam_conv conversation = {answer, password};
    pam_handle_t *pamh = NULL;
    int status = pam_start(argv[1], argv[2], &conversation, &pamh);
    if (status == PAM_SUCCESS) status = pam_authenticate(pamh, 0);
    if (status == PAM_SUCCESS) status = pam_acct_mgmt(pamh, 0);
    if (status == PAM_SUCCESS) status = pam_setcred(pamh, PAM_ESTABLISH_CRED);
    if (status == PAM_SUCCESS) status = pam_open_session(pamh, 0);
    if (status != PAM_SUCCESS) {
        fprintf(stderr, "%s\n", pam_strerror(pamh, status));
        pam_end(pamh, status);
        return 1;
    }
    char **environment = pam_getenvlist(pamh);
    for (char **entry = environment; entry != NULL && *entry != NULL; entry++) {
        puts(*entry);
        free(*entry);
    }
    free(environment);
    (void)pam_close_session(pamh, 0);
    (void)pam_setcred(pamh, PAM_DELETE_CRED);
    pam_end(pamh, PAM_SUCCESS);
    return 0;
}
