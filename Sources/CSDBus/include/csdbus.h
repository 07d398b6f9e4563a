#ifndef CSDBUS_H
#define CSDBUS_H
#include <stddef.h>
#include <stdint.h>

// sd-bus (systemd's D-Bus library), loaded from libsystemd.so.0 with dlopen at the first
// csdbus_load, so that only `keychain serve` ever loads it and building the package needs no
// systemd headers. Each function is sd-bus's of the same name (sd_bus_...), with its return
// convention: a negative errno on failure. Variadic sd-bus calls are left out: the Swift side
// reads and writes messages one value at a time.

typedef struct csdbus_bus csdbus_bus;
typedef struct csdbus_message csdbus_message;

// A handler of messages (a method call on an object, or a signal a match selected): returns 1
// when it answered, 0 to let sd-bus answer (an unknown object or method), a negative errno on
// failure. `ret_error` is sd-bus's sd_bus_error, unused here: handlers reply themselves.
typedef int (*csdbus_handler)(csdbus_message *message, void *userdata, void *ret_error);

enum {
    CSDBUS_NAME_REPLACE_EXISTING = 1,   // SD_BUS_NAME_REPLACE_EXISTING
    CSDBUS_NAME_ALLOW_REPLACEMENT = 2,  // SD_BUS_NAME_ALLOW_REPLACEMENT
    CSDBUS_NAME_QUEUE = 4,              // SD_BUS_NAME_QUEUE
    CSDBUS_MESSAGE_METHOD_CALL = 1,     // SD_BUS_MESSAGE_METHOD_CALL
};

// Loads libsystemd.so.0; 0 when loaded, -1 with a message in errbuf (at least 256 bytes).
int csdbus_load(char *errbuf);

int csdbus_open_user(csdbus_bus **bus);
// The system bus (DBUS_SYSTEM_BUS_ADDRESS, else the standard socket): logind's signals.
int csdbus_open_system(csdbus_bus **bus);
// The bus at a D-Bus address (`unix:path=...`), as a client of it (Hello sent).
int csdbus_open_address(const char *address, csdbus_bus **bus);
int csdbus_request_name(csdbus_bus *bus, const char *name, uint64_t flags);
int csdbus_release_name(csdbus_bus *bus, const char *name);
int csdbus_get_unique_name(csdbus_bus *bus, const char **name);
// Calls `handler` for every message to `prefix` or a path under it (a floating slot that lives
// as long as the bus).
int csdbus_add_fallback(csdbus_bus *bus, const char *prefix, csdbus_handler handler, void *userdata);
// Calls `handler` for every message the match rule selects.
int csdbus_add_match(csdbus_bus *bus, const char *match, csdbus_handler handler, void *userdata);
int csdbus_process(csdbus_bus *bus);
// What the caller's own loop polls for (it watches other descriptors beside the bus): the
// bus's descriptor, the poll events it waits for, and the CLOCK_MONOTONIC time (microseconds)
// by which csdbus_process must run again (UINT64_MAX: none).
int csdbus_get_fd(csdbus_bus *bus);
int csdbus_get_events(csdbus_bus *bus);
int csdbus_get_timeout(csdbus_bus *bus, uint64_t *timeout_usec);
int csdbus_flush(csdbus_bus *bus);
void csdbus_close(csdbus_bus *bus);

const char *csdbus_message_get_sender(csdbus_message *m);
const char *csdbus_message_get_path(csdbus_message *m);
const char *csdbus_message_get_interface(csdbus_message *m);
const char *csdbus_message_get_member(csdbus_message *m);
const char *csdbus_message_get_signature(csdbus_message *m);
int csdbus_message_get_type(csdbus_message *m, uint8_t *type);
csdbus_bus *csdbus_message_get_bus(csdbus_message *m);

int csdbus_message_peek_type(csdbus_message *m, char *type, const char **contents);
int csdbus_message_read_basic(csdbus_message *m, char type, void *p);
int csdbus_message_read_array(csdbus_message *m, char type, const void **ptr, size_t *size);
int csdbus_message_enter_container(csdbus_message *m, char type, const char *contents);
int csdbus_message_exit_container(csdbus_message *m);

int csdbus_message_new_method_return(csdbus_message *call, csdbus_message **reply);
int csdbus_message_new_method_error(csdbus_message *call, csdbus_message **reply, const char *name, const char *text);
int csdbus_message_new_signal(csdbus_bus *bus, csdbus_message **m, const char *path, const char *interface, const char *member);
int csdbus_message_append_basic(csdbus_message *m, char type, const void *p);
int csdbus_message_append_array(csdbus_message *m, char type, const void *ptr, size_t size);
int csdbus_message_open_container(csdbus_message *m, char type, const char *contents);
int csdbus_message_close_container(csdbus_message *m);
// Marks a message as carrying secrets: sd-bus wipes its memory when it is freed.
int csdbus_message_sensitive(csdbus_message *m);
int csdbus_send(csdbus_bus *bus, csdbus_message *m);
void csdbus_message_unref(csdbus_message *m);

#endif
