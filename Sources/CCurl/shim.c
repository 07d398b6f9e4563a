#include "ccurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

// libcurl's ABI, as curl/curl.h declares it and curl keeps it stable (numbers checked against
// the 7.88 header): declared here so that building the package needs no libcurl headers.
typedef void CURL;
typedef int CURLcode;
typedef int CURLoption;
typedef int CURLINFO;
typedef long long curl_off_t;
struct curl_slist;
enum {
    CURLE_OK = 0,
    CURLE_ABORTED_BY_CALLBACK = 42,
    CURL_GLOBAL_DEFAULT = 3,
    CURL_ERROR_SIZE = 256,
    CURLOPT_WRITEDATA = 10001,
    CURLOPT_URL = 10002,
    CURLOPT_ERRORBUFFER = 10010,
    CURLOPT_POSTFIELDS = 10015,
    CURLOPT_HTTPHEADER = 10023,
    CURLOPT_SSLCERT = 10025,
    CURLOPT_CAINFO = 10065,
    CURLOPT_SSLKEY = 10087,
    CURLOPT_NOPROXY = 10177,
    CURLOPT_PROTOCOLS_STR = 10318,
    CURLOPT_WRITEFUNCTION = 20011,
    CURLOPT_NOSIGNAL = 99,
    CURLOPT_TIMEOUT_MS = 155,
    CURLOPT_CONNECTTIMEOUT_MS = 156,
    CURLOPT_NOPROGRESS = 43,
    CURLOPT_XFERINFODATA = 10057,
    CURLOPT_XFERINFOFUNCTION = 20219,
    CURLINFO_RESPONSE_CODE = 0x200002,
    CURLINFO_PRETRANSFER_TIME_T = 0x600035,
};

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    char error[256];
    int loaded;
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(lib.error, sizeof lib.error, "libcurl.so.4 could not be loaded (install libcurl4): %s", dlerror());
        return;
    }
#define SYM(field, name) if (!(*(void **)&lib.field = dlsym(handle, name))) { snprintf(lib.error, sizeof lib.error, "libcurl.so.4 lacks %s", name); return; }
    SYM(global_init, "curl_global_init")
    SYM(easy_init, "curl_easy_init")
    SYM(easy_setopt, "curl_easy_setopt")
    SYM(easy_perform, "curl_easy_perform")
    SYM(easy_getinfo, "curl_easy_getinfo")
    SYM(easy_cleanup, "curl_easy_cleanup")
    SYM(slist_append, "curl_slist_append")
    SYM(slist_free_all, "curl_slist_free_all")
#undef SYM
    if (lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(lib.error, sizeof lib.error, "curl_global_init failed");
        return;
    }
    lib.loaded = 1;
}

struct sink { ccurl_body_cb cb; void *context; };

// Silence on a stream, measured from the last byte received (or from the request going out,
// the connection being bounded by its own timeout): libcurl's own low-speed check averages the
// speed over a window of seconds, so a stream that said a little and then nothing ran on for
// several seconds past the idle time asked for.
struct idle {
    CURL *handle;
    long long limit_ms;
    curl_off_t received;
    long long last_ms;
    int expired;
};

static long long monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// libcurl calls this as the transfer goes, and about once a second while nothing arrives.
static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)ultotal; (void)ulnow;
    struct idle *idle = user;
    long long now = monotonic_ms();
    // Still connecting (a libcurl that cannot say counts from the start).
    curl_off_t connected = 0;
    int connecting = lib.easy_getinfo(idle->handle, CURLINFO_PRETRANSFER_TIME_T, &connected) == CURLE_OK && connected == 0;
    if (connecting || dlnow != idle->received) {
        idle->received = dlnow;
        idle->last_ms = now;
        return 0;
    }
    if (now - idle->last_ms < idle->limit_ms) return 0;
    idle->expired = 1;
    return 1;
}

static size_t on_write(char *bytes, size_t size, size_t count, void *user) {
    struct sink *sink = user;
    return sink->cb(bytes, size * count, sink->context);
}

int ccurl_post(const struct ccurl_request *r, ccurl_body_cb on_body, void *context, long *http_status, char *errbuf) {
    pthread_once(&once, load);
    *http_status = 0;
    errbuf[0] = 0;
    if (!lib.loaded) {
        snprintf(errbuf, CURL_ERROR_SIZE, "%s", lib.error);
        return CCURL_UNAVAILABLE;
    }
    CURL *h = lib.easy_init();
    if (!h) {
        snprintf(errbuf, CURL_ERROR_SIZE, "curl_easy_init failed");
        return CCURL_UNAVAILABLE;
    }
    struct sink sink = { on_body, context };
    struct curl_slist *headers = lib.slist_append(NULL, "Content-Type: application/json");
    lib.easy_setopt(h, CURLOPT_URL, r->url);
    lib.easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
    lib.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    lib.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    lib.easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    lib.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    // Threads run transfers; signals would reach the wrong one.
    lib.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    lib.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    // Never a proxy from the environment: the endpoints are the user's own cluster.
    lib.easy_setopt(h, CURLOPT_NOPROXY, "*");
    if (r->ca_file) lib.easy_setopt(h, CURLOPT_CAINFO, r->ca_file);
    if (r->cert_file) lib.easy_setopt(h, CURLOPT_SSLCERT, r->cert_file);
    if (r->key_file) lib.easy_setopt(h, CURLOPT_SSLKEY, r->key_file);
    if (r->connect_timeout_ms) lib.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, r->connect_timeout_ms);
    if (r->timeout_ms) lib.easy_setopt(h, CURLOPT_TIMEOUT_MS, r->timeout_ms);
    struct idle idle = { h, (long long)r->idle_timeout_s * 1000, 0, monotonic_ms(), 0 };
    if (r->idle_timeout_s) {
        lib.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        lib.easy_setopt(h, CURLOPT_XFERINFODATA, &idle);
        lib.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    CURLcode rc = lib.easy_perform(h);
    lib.easy_getinfo(h, CURLINFO_RESPONSE_CODE, http_status);
    if (rc == CURLE_ABORTED_BY_CALLBACK && idle.expired) {
        rc = CCURL_TIMEDOUT;
        snprintf(errbuf, CURL_ERROR_SIZE, "nothing arrived for %ld s", r->idle_timeout_s);
    }
    if (rc != CURLE_OK && errbuf[0] == 0) snprintf(errbuf, CURL_ERROR_SIZE, "curl error %d", (int)rc);
    lib.slist_free_all(headers);
    lib.easy_cleanup(h);
    return (int)rc;
}
