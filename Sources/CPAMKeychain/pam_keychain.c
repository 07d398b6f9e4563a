// The login's PAM module for the keychain vault: it hands the login password to `keychain
// pam` run as the user, and does nothing else with it.
//
// Kept small on purpose, as it runs inside the login program (sshd, login, su), as root:
// - it never prompts or logs a password: with none from an earlier module it does nothing;
// - `auth` cannot tell whether the password was right (a stack may run it after a failed
//   pam_unix), so it only keeps a copy in the PAM handle (wiped when the handle ends or the
//   copy is used); `open_session`, which the login program calls only after authentication
//   succeeded, hands it to the helper, which unlocks or makes the vault;
// - the password goes to the helper over a socket pair (never argv or environment), and the
//   helper's work (scrypt, SQLite, OpenSSL) runs in that separate process;
// - the helper runs as the user alone (supplementary groups, gid, uid dropped, checked), with
//   a fixed environment and no other descriptor; it must be a root-owned program no one else
//   may write (the module's first argument, an absolute path);
// - every outcome is PAM_IGNORE or PAM_SUCCESS: the vault never stops a login.
#define _GNU_SOURCE
#include "pam_keychain.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

// From the PAM ABI (security/_pam_types.h, security/pam_modules.h).
#define PAM_SUCCESS 0
#define PAM_IGNORE 25
#define PAM_USER 2
#define PAM_AUTHTOK 6
#define PAM_OLDAUTHTOK 7
#define PAM_PRELIM_CHECK 0x4000
#define PAM_UPDATE_AUTHTOK 0x2000
extern int pam_get_item(const pam_handle_t *pamh, int item_type, const void **item);
extern int pam_set_data(pam_handle_t *pamh, const char *module_data_name, void *data, void (*cleanup)(pam_handle_t *pamh, void *data, int error_status));
extern int pam_get_data(const pam_handle_t *pamh, const char *module_data_name, const void **data);
extern const char *pam_getenv(pam_handle_t *pamh, const char *name);
extern int pam_putenv(pam_handle_t *pamh, const char *name_value);

// The longest password passed on (PAM_MAX_RESP_SIZE).
#define PASSWORD_LIMIT 512

// The name under which `auth` keeps the password for `open_session`.
#define KEPT_PASSWORD "pam_keychain_password"

// The kept password: its length, then its bytes.
struct kept_password {
    size_t length;
    char bytes[PASSWORD_LIMIT];
};

// libpam calls this when the copy is replaced or dropped, and at pam_end.
static void wipe_kept_password(pam_handle_t *pamh, void *data, int error_status) {
    (void)pamh;
    (void)error_status;
    if (data == NULL) return;
    explicit_bzero(data, sizeof(struct kept_password));
    free(data);
}

// Whether `path` is root's and writable by no one else.
static int roots_alone(const char *path, int directory) {
    struct stat info;
    if (stat(path, &info) != 0 || info.st_uid != 0 || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0) return 0;
    return directory ? S_ISDIR(info.st_mode) : S_ISREG(info.st_mode);
}

// The helper the service's file names: an absolute path to a program that, with the directory
// holding it, only root may change (no one else can put another program in its place).
static const char *helper_path(int argc, const char **argv) {
    if (argc < 1 || argv[0] == NULL || argv[0][0] != '/') return NULL;
    char directory[4096];
    size_t length = strnlen(argv[0], sizeof directory);
    if (length >= sizeof directory) return NULL;
    memcpy(directory, argv[0], length + 1);
    char *slash = strrchr(directory, '/');
    if (slash == directory) slash[1] = '\0'; else *slash = '\0';
    if (!roots_alone(argv[0], 0) || !roots_alone(directory, 1)) return NULL;
    return argv[0];
}

static const char *item_text(pam_handle_t *pamh, int type) {
    const void *item = NULL;
    if (pam_get_item(pamh, type, &item) != PAM_SUCCESS) return NULL;
    return item;
}

// The user's runtime directory: the session's XDG_RUNTIME_DIR, else /run/user/UID, made here
// (0700, the user's) when the system has none, inside a /run/user that is root's and writable by
// no one else; -1 when what is there is not safe to use. Opened without following a link, and
// owner and mode set on that descriptor: a link put in its place is never followed as root.
static int runtime_directory(pam_handle_t *pamh, const struct passwd *user, char *out, size_t size) {
    const char *given = pam_getenv(pamh, "XDG_RUNTIME_DIR");
    int made = 0;
    if (given != NULL && given[0] == '/') {
        if ((size_t)snprintf(out, size, "%s", given) >= size) return -1;
    } else {
        if ((size_t)snprintf(out, size, "/run/user/%lu", (unsigned long)user->pw_uid) >= size) return -1;
        if (mkdir("/run/user", 0755) == 0) (void)chmod("/run/user", 0755);
        struct stat parent;
        if (lstat("/run/user", &parent) != 0 || !S_ISDIR(parent.st_mode) || parent.st_uid != 0 || (parent.st_mode & (S_IWGRP | S_IWOTH)) != 0) return -1;
        made = mkdir(out, 0700) == 0;
    }
    int directory = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (directory < 0) {
        if (made) (void)rmdir(out);
        return -1;
    }
    // The mode explicitly: mkdir's is subject to the login program's umask.
    if (made && (fchown(directory, user->pw_uid, user->pw_gid) != 0 || fchmod(directory, 0700) != 0)) {
        close(directory);
        (void)rmdir(out);
        return -1;
    }
    struct stat info;
    int safe = fstat(directory, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == user->pw_uid && (info.st_mode & 077) == 0;
    close(directory);
    return safe ? 0 : -1;
}

// Runs `helper pam PHASE` as `user` with `input` (length `length`, may be 0) on its standard
// input; its exit status, or -1.
static int run_helper(const char *helper, const struct passwd *user, const char *phase, const char *runtime, const char *input, size_t length) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
    char home[4096], name[512], runtime_variable[4200];
    if ((size_t)snprintf(home, sizeof home, "HOME=%s", user->pw_dir) >= sizeof home || (size_t)snprintf(name, sizeof name, "USER=%s", user->pw_name) >= sizeof name) {
        close(pair[0]);
        close(pair[1]);
        return -1;
    }
    // The groups are read before the fork: the child does only what is safe after one.
    gid_t groups[256];
    int group_count = 256;
    if (getgrouplist(user->pw_name, user->pw_gid, groups, &group_count) < 0) {
        close(pair[0]);
        close(pair[1]);
        return -1;
    }
    runtime_variable[0] = '\0';
    if (runtime != NULL) (void)snprintf(runtime_variable, sizeof runtime_variable, "XDG_RUNTIME_DIR=%s", runtime);
    pid_t child = fork();
    if (child < 0) {
        close(pair[0]);
        close(pair[1]);
        return -1;
    }
    if (child == 0) {
        // The child: the socket as standard input, /dev/null for the rest, the user alone.
        if (dup2(pair[1], 0) != 0) _exit(127);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 1) != 1 || dup2(null, 2) != 2) _exit(127);
        closefrom(3);
        if (setgroups((size_t)group_count, groups) != 0 || setgid(user->pw_gid) != 0 || setuid(user->pw_uid) != 0) _exit(127);
        if (getuid() != user->pw_uid || geteuid() != user->pw_uid || getgid() != user->pw_gid || (user->pw_uid != 0 && setuid(0) == 0)) _exit(127);
        signal(SIGPIPE, SIG_DFL);
        const char *environment[] = {home, name, "PATH=/usr/local/bin:/usr/bin:/bin", runtime_variable[0] ? runtime_variable : NULL, NULL};
        const char *arguments[] = {"keychain", "pam", phase, NULL};
        execve(helper, (char *const *)arguments, (char *const *)environment);
        _exit(127);
    }
    close(pair[1]);
    // send with MSG_NOSIGNAL: a helper gone early must not raise SIGPIPE in the login program.
    size_t sent = 0;
    while (sent < length) {
        ssize_t n = send(pair[0], input + sent, length - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        sent += (size_t)n;
    }
    close(pair[0]);
    int status = 0;
    pid_t waited;
    do {
        waited = waitpid(child, &status, 0);
    } while (waited < 0 && errno == EINTR);
    if (waited != child || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

// The user PAM names, as the password database has it.
static const struct passwd *pam_user(pam_handle_t *pamh, struct passwd *entry, char *buffer, size_t size) {
    const char *name = item_text(pamh, PAM_USER);
    struct passwd *found = NULL;
    if (name == NULL || getpwnam_r(name, entry, buffer, size, &found) != 0 || found == NULL) return NULL;
    return found;
}

// Keeps the password for open_session, and nothing else: this step cannot see whether an
// earlier module accepted it. Never PAM_SUCCESS, as it proved nothing about the user.
int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    (void)argc;
    (void)argv;
    // Any copy from an earlier attempt on this handle goes first.
    (void)pam_set_data(pamh, KEPT_PASSWORD, NULL, NULL);
    const char *password = item_text(pamh, PAM_AUTHTOK);
    if (password == NULL) return PAM_IGNORE;
    size_t length = strnlen(password, PASSWORD_LIMIT + 1);
    if (length == 0 || length > PASSWORD_LIMIT) return PAM_IGNORE;
    struct kept_password *kept = calloc(1, sizeof *kept);
    if (kept == NULL) return PAM_IGNORE;
    kept->length = length;
    memcpy(kept->bytes, password, length);
    if (pam_set_data(pamh, KEPT_PASSWORD, kept, wipe_kept_password) != PAM_SUCCESS) wipe_kept_password(pamh, kept, 0);
    return PAM_IGNORE;
}

int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}

// `DBUS_SESSION_BUS_ADDRESS=unix:path=<runtime>/bus`, the path escaped as the D-Bus
// specification says (bytes outside [-0-9A-Za-z_/.*] as %XX). 0 when it fits in `size`.
static int bus_address_variable(const char *runtime, char *out, size_t size) {
    static const char prefix[] = "DBUS_SESSION_BUS_ADDRESS=unix:path=";
    static const char hex[] = "0123456789abcdef";
    size_t used = 0;
    for (const char *c = prefix; *c != '\0'; c++) {
        if (used + 1 >= size) return -1;
        out[used++] = *c;
    }
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/bus", runtime) >= sizeof path) return -1;
    for (const unsigned char *c = (const unsigned char *)path; *c != '\0'; c++) {
        int plain = (*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == '-' || *c == '_' || *c == '/'
            || *c == '.' || *c == '*';
        if (used + (plain ? 1 : 3) >= size) return -1;
        if (plain) {
            out[used++] = (char)*c;
        } else {
            out[used++] = '%';
            out[used++] = hex[*c >> 4];
            out[used++] = hex[*c & 15];
        }
    }
    out[used] = '\0';
    return 0;
}

int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    const char *helper = helper_path(argc, argv);
    struct passwd entry;
    char buffer[16384];
    const struct passwd *user = pam_user(pamh, &entry, buffer, sizeof buffer);
    // The session opens only after authentication succeeded: the password auth kept is the
    // user's, and unlocks (or makes) the vault, before the bus starts (which then finds the
    // activation file a new vault's helper installs). Then the copy goes.
    const void *data = NULL;
    if (pam_get_data(pamh, KEPT_PASSWORD, &data) == PAM_SUCCESS && data != NULL) {
        const struct kept_password *kept = data;
        if (helper != NULL && user != NULL) (void)run_helper(helper, user, "auth", NULL, kept->bytes, kept->length);
        (void)pam_set_data(pamh, KEPT_PASSWORD, NULL, NULL);
    }
    char runtime[4096];
    if (helper == NULL || user == NULL || runtime_directory(pamh, user, runtime, sizeof runtime) != 0) return PAM_IGNORE;
    // The session's shells find the bus through XDG_RUNTIME_DIR (as pam_systemd sets it).
    if (pam_getenv(pamh, "XDG_RUNTIME_DIR") == NULL) {
        char variable[4200];
        if ((size_t)snprintf(variable, sizeof variable, "XDG_RUNTIME_DIR=%s", runtime) < sizeof variable) (void)pam_putenv(pamh, variable);
    }
    if (run_helper(helper, user, "session", runtime, NULL, 0) != 0) return PAM_IGNORE;
    // Programs that read only DBUS_SESSION_BUS_ADDRESS (Python's jeepney, under keyring and
    // secretstorage) find the bus through it, as pam_systemd sets it where a user bus exists.
    if (pam_getenv(pamh, "DBUS_SESSION_BUS_ADDRESS") == NULL) {
        char variable[4096 * 3 + 64];
        if (bus_address_variable(runtime, variable, sizeof variable) == 0) (void)pam_putenv(pamh, variable);
    }
    return PAM_SUCCESS;
}

int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    // The bus stays for the user's other sessions (every shell finds the same one).
    return PAM_SUCCESS;
}

// Acts in the update phase alone (the preliminary check changes nothing). Placed where the
// stack reaches it only after pam_unix changed the password (docs/login.md), so the vault never
// moves to a password the login does not have.
int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    if (flags & PAM_PRELIM_CHECK) return PAM_SUCCESS;
    if (!(flags & PAM_UPDATE_AUTHTOK)) return PAM_IGNORE;
    const char *helper = helper_path(argc, argv);
    const char *old = item_text(pamh, PAM_OLDAUTHTOK);
    const char *new = item_text(pamh, PAM_AUTHTOK);
    struct passwd entry;
    char buffer[16384];
    const struct passwd *user = pam_user(pamh, &entry, buffer, sizeof buffer);
    // Without the old password (root setting another user's) the vault keeps its passphrase.
    if (helper == NULL || old == NULL || new == NULL || user == NULL) return PAM_IGNORE;
    size_t old_length = strnlen(old, PASSWORD_LIMIT + 1), new_length = strnlen(new, PASSWORD_LIMIT + 1);
    if (old_length == 0 || new_length == 0 || old_length > PASSWORD_LIMIT || new_length > PASSWORD_LIMIT) return PAM_IGNORE;
    // Old and new, each ended by a NUL (a PAM token never holds one).
    char both[2 * PASSWORD_LIMIT + 2];
    memcpy(both, old, old_length);
    both[old_length] = '\0';
    memcpy(both + old_length + 1, new, new_length);
    both[old_length + 1 + new_length] = '\0';
    int status = run_helper(helper, user, "password", NULL, both, old_length + new_length + 2);
    explicit_bzero(both, sizeof both);
    return status == 0 ? PAM_SUCCESS : PAM_IGNORE;
}
