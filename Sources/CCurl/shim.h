#ifndef AZSEED_CCURL_SHIM_H
#define AZSEED_CCURL_SHIM_H
// libcurl's easy and multi interfaces for the AzureStorage transport. curl_easy_setopt,
// curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot call: these typed
// wrappers can.
#include <curl/curl.h>

typedef size_t (*azs_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode azs_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode azs_curl_setopt_pointer(CURL *curl, CURLoption option, const void *value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode azs_curl_setopt_offset(CURL *curl, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode azs_curl_setopt_callback(CURL *curl, CURLoption option, azs_curl_data_callback callback) {
    return curl_easy_setopt(curl, option, callback);
}

/// The check run once a connection is open, before the request is sent (CURLOPT_PREREQFUNCTION).
static inline CURLcode azs_curl_setopt_prereq(CURL *curl, curl_prereq_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_PREREQFUNCTION, callback);
}

/// The progress callback (CURLOPT_XFERINFOFUNCTION), called at least once a second.
static inline CURLcode azs_curl_setopt_xferinfo(CURL *curl, curl_xferinfo_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode azs_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}

static inline CURLcode azs_curl_getinfo_pointer(CURL *curl, CURLINFO info, void **value) {
    return curl_easy_getinfo(curl, info, value);
}

static inline CURLMcode azs_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The finished transfer's result (CURLMsg.data is a union Swift reads awkwardly).
static inline CURLcode azs_curl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

#endif
