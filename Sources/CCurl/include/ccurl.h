#ifndef CCURL_H
#define CCURL_H
#include <stddef.h>

// One HTTP POST through libcurl, loaded with dlopen at first use so that programs which never
// sync do not load it (nor its dozen dependencies) at start-up. curl_easy_setopt is variadic,
// which Swift cannot call: this fixed-arity wrapper is the whole interface.

// Receives each chunk of the response body; returns `length` to go on, anything else to stop
// the transfer (ccurl_post then returns CCURL_ABORTED). Only libcurl.so.4 is needed, at run
// time; building needs no libcurl headers.
typedef size_t (*ccurl_body_cb)(const char *bytes, size_t length, void *context);

struct ccurl_request {
    const char *url;
    const char *body;            // JSON request body
    const char *ca_file;         // PEM bundle of the CAs to trust, or NULL for the system's
    const char *cert_file;       // client certificate (PEM), or NULL
    const char *key_file;        // its private key (PEM), or NULL
    long connect_timeout_ms;
    long timeout_ms;             // whole transfer; 0 for none (streams)
    long idle_timeout_s;         // abort when nothing arrives for this long; 0 for none
};

enum {
    CCURL_OK = 0,
    CCURL_UNAVAILABLE = -1,      // libcurl.so.4 could not be loaded (errbuf says why)
    CCURL_ABORTED = 23,          // the body callback stopped the transfer (CURLE_WRITE_ERROR)
    CCURL_TIMEDOUT = 28,         // CURLE_OPERATION_TIMEDOUT
};

// Performs the request; returns a CURLcode (0 on a completed transfer, whatever its HTTP
// status), with the status in *http_status and a message in errbuf (at least 256 bytes).
int ccurl_post(const struct ccurl_request *request, ccurl_body_cb on_body, void *context, long *http_status, char *errbuf);

#endif
