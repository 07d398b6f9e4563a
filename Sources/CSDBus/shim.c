#include "csdbus.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// sd-bus's ABI as systemd's sd-bus.h declares it (stable since systemd 221): declared here so
// that building the package needs no systemd headers.
typedef struct { const char *name; const char *message; int _need_free; } sd_bus_error;

static struct {
    int (*open_user)(csdbus_bus **);
    int (*open_system)(csdbus_bus **);
    int (*bus_new)(csdbus_bus **);
    int (*set_address)(csdbus_bus *, const char *);
    int (*set_bus_client)(csdbus_bus *, int);
    int (*start)(csdbus_bus *);
    csdbus_bus *(*unref)(csdbus_bus *);
    int (*request_name)(csdbus_bus *, const char *, uint64_t);
    int (*release_name)(csdbus_bus *, const char *);
    int (*get_unique_name)(csdbus_bus *, const char **);
    int (*add_fallback)(csdbus_bus *, void **, const char *, csdbus_handler, void *);
    int (*add_match)(csdbus_bus *, void **, const char *, csdbus_handler, void *);
    int (*process)(csdbus_bus *, csdbus_message **);
    int (*get_fd)(csdbus_bus *);
    int (*get_events)(csdbus_bus *);
    int (*get_timeout)(csdbus_bus *, uint64_t *);
    int (*flush)(csdbus_bus *);
    csdbus_bus *(*flush_close_unref)(csdbus_bus *);
    const char *(*get_sender)(csdbus_message *);
    const char *(*get_path)(csdbus_message *);
    const char *(*get_interface)(csdbus_message *);
    const char *(*get_member)(csdbus_message *);
    const char *(*get_signature)(csdbus_message *, int);
    int (*get_type)(csdbus_message *, uint8_t *);
    csdbus_bus *(*get_bus)(csdbus_message *);
    int (*peek_type)(csdbus_message *, char *, const char **);
    int (*read_basic)(csdbus_message *, char, void *);
    int (*read_array)(csdbus_message *, char, const void **, size_t *);
    int (*enter_container)(csdbus_message *, char, const char *);
    int (*exit_container)(csdbus_message *);
    int (*new_method_return)(csdbus_message *, csdbus_message **);
    int (*new_method_error)(csdbus_message *, csdbus_message **, const sd_bus_error *);
    int (*new_signal)(csdbus_bus *, csdbus_message **, const char *, const char *, const char *);
    int (*append_basic)(csdbus_message *, char, const void *);
    int (*append_array)(csdbus_message *, char, const void *, size_t);
    int (*open_container)(csdbus_message *, char, const char *);
    int (*close_container)(csdbus_message *);
    int (*sensitive)(csdbus_message *);
    int (*send)(csdbus_bus *, csdbus_message *, uint64_t *);
    csdbus_message *(*message_unref)(csdbus_message *);
    char error[256];
    int loaded;
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *handle = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(lib.error, sizeof lib.error, "libsystemd.so.0 could not be loaded (install libsystemd0): %s", dlerror());
        return;
    }
#define SYM(field, name) if (!(*(void **)&lib.field = dlsym(handle, name))) { snprintf(lib.error, sizeof lib.error, "libsystemd.so.0 lacks %s (systemd too old)", name); return; }
    SYM(open_user, "sd_bus_open_user")
    SYM(open_system, "sd_bus_open_system")
    SYM(bus_new, "sd_bus_new")
    SYM(set_address, "sd_bus_set_address")
    SYM(set_bus_client, "sd_bus_set_bus_client")
    SYM(start, "sd_bus_start")
    SYM(unref, "sd_bus_unref")
    SYM(request_name, "sd_bus_request_name")
    SYM(release_name, "sd_bus_release_name")
    SYM(get_unique_name, "sd_bus_get_unique_name")
    SYM(add_fallback, "sd_bus_add_fallback")
    SYM(add_match, "sd_bus_add_match")
    SYM(process, "sd_bus_process")
    SYM(get_fd, "sd_bus_get_fd")
    SYM(get_events, "sd_bus_get_events")
    SYM(get_timeout, "sd_bus_get_timeout")
    SYM(flush, "sd_bus_flush")
    SYM(flush_close_unref, "sd_bus_flush_close_unref")
    SYM(get_sender, "sd_bus_message_get_sender")
    SYM(get_path, "sd_bus_message_get_path")
    SYM(get_interface, "sd_bus_message_get_interface")
    SYM(get_member, "sd_bus_message_get_member")
    SYM(get_signature, "sd_bus_message_get_signature")
    SYM(get_type, "sd_bus_message_get_type")
    SYM(get_bus, "sd_bus_message_get_bus")
    SYM(peek_type, "sd_bus_message_peek_type")
    SYM(read_basic, "sd_bus_message_read_basic")
    SYM(read_array, "sd_bus_message_read_array")
    SYM(enter_container, "sd_bus_message_enter_container")
    SYM(exit_container, "sd_bus_message_exit_container")
    SYM(new_method_return, "sd_bus_message_new_method_return")
    SYM(new_method_error, "sd_bus_message_new_method_error")
    SYM(new_signal, "sd_bus_message_new_signal")
    SYM(append_basic, "sd_bus_message_append_basic")
    SYM(append_array, "sd_bus_message_append_array")
    SYM(open_container, "sd_bus_message_open_container")
    SYM(close_container, "sd_bus_message_close_container")
    SYM(sensitive, "sd_bus_message_sensitive")
    SYM(send, "sd_bus_send")
    SYM(message_unref, "sd_bus_message_unref")
#undef SYM
    lib.loaded = 1;
}

int csdbus_load(char *errbuf) {
    pthread_once(&once, load);
    if (lib.loaded) return 0;
    snprintf(errbuf, 256, "%s", lib.error);
    return -1;
}

// Every call below runs after a successful csdbus_load (the Swift side loads first).
int csdbus_open_user(csdbus_bus **bus) { return lib.open_user(bus); }
int csdbus_open_system(csdbus_bus **bus) { return lib.open_system(bus); }
int csdbus_open_address(const char *address, csdbus_bus **bus) {
    csdbus_bus *opened = NULL;
    int r = lib.bus_new(&opened);
    if (r < 0) return r;
    if ((r = lib.set_address(opened, address)) < 0 || (r = lib.set_bus_client(opened, 1)) < 0 || (r = lib.start(opened)) < 0) {
        lib.unref(opened);
        return r;
    }
    *bus = opened;
    return 0;
}
int csdbus_request_name(csdbus_bus *bus, const char *name, uint64_t flags) { return lib.request_name(bus, name, flags); }
int csdbus_release_name(csdbus_bus *bus, const char *name) { return lib.release_name(bus, name); }
int csdbus_get_unique_name(csdbus_bus *bus, const char **name) { return lib.get_unique_name(bus, name); }
int csdbus_add_fallback(csdbus_bus *bus, const char *prefix, csdbus_handler handler, void *userdata) {
    return lib.add_fallback(bus, NULL, prefix, handler, userdata);
}
int csdbus_add_match(csdbus_bus *bus, const char *match, csdbus_handler handler, void *userdata) {
    return lib.add_match(bus, NULL, match, handler, userdata);
}
int csdbus_process(csdbus_bus *bus) { return lib.process(bus, NULL); }
int csdbus_get_fd(csdbus_bus *bus) { return lib.get_fd(bus); }
int csdbus_get_events(csdbus_bus *bus) { return lib.get_events(bus); }
int csdbus_get_timeout(csdbus_bus *bus, uint64_t *timeout_usec) { return lib.get_timeout(bus, timeout_usec); }
int csdbus_flush(csdbus_bus *bus) { return lib.flush(bus); }
void csdbus_close(csdbus_bus *bus) { lib.flush_close_unref(bus); }

const char *csdbus_message_get_sender(csdbus_message *m) { return lib.get_sender(m); }
const char *csdbus_message_get_path(csdbus_message *m) { return lib.get_path(m); }
const char *csdbus_message_get_interface(csdbus_message *m) { return lib.get_interface(m); }
const char *csdbus_message_get_member(csdbus_message *m) { return lib.get_member(m); }
const char *csdbus_message_get_signature(csdbus_message *m) { return lib.get_signature(m, 1); }
int csdbus_message_get_type(csdbus_message *m, uint8_t *type) { return lib.get_type(m, type); }
csdbus_bus *csdbus_message_get_bus(csdbus_message *m) { return lib.get_bus(m); }

int csdbus_message_peek_type(csdbus_message *m, char *type, const char **contents) { return lib.peek_type(m, type, contents); }
int csdbus_message_read_basic(csdbus_message *m, char type, void *p) { return lib.read_basic(m, type, p); }
int csdbus_message_read_array(csdbus_message *m, char type, const void **ptr, size_t *size) { return lib.read_array(m, type, ptr, size); }
int csdbus_message_enter_container(csdbus_message *m, char type, const char *contents) { return lib.enter_container(m, type, contents); }
int csdbus_message_exit_container(csdbus_message *m) { return lib.exit_container(m); }

int csdbus_message_new_method_return(csdbus_message *call, csdbus_message **reply) { return lib.new_method_return(call, reply); }
int csdbus_message_new_method_error(csdbus_message *call, csdbus_message **reply, const char *name, const char *text) {
    sd_bus_error error = { name, text, 0 };
    return lib.new_method_error(call, reply, &error);
}
int csdbus_message_new_signal(csdbus_bus *bus, csdbus_message **m, const char *path, const char *interface, const char *member) {
    return lib.new_signal(bus, m, path, interface, member);
}
int csdbus_message_append_basic(csdbus_message *m, char type, const void *p) { return lib.append_basic(m, type, p); }
int csdbus_message_append_array(csdbus_message *m, char type, const void *ptr, size_t size) { return lib.append_array(m, type, ptr, size); }
int csdbus_message_open_container(csdbus_message *m, char type, const char *contents) { return lib.open_container(m, type, contents); }
int csdbus_message_close_container(csdbus_message *m) { return lib.close_container(m); }
int csdbus_message_sensitive(csdbus_message *m) { return lib.sensitive(m); }
int csdbus_send(csdbus_bus *bus, csdbus_message *m) { return lib.send(bus, m, NULL); }
void csdbus_message_unref(csdbus_message *m) { lib.message_unref(m); }
