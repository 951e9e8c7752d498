// Building a grader's messages (see text.h).

#include "text.h"

#include <stdlib.h>
#include <string.h>

static void reserve(text_t *text, size_t more) {
    size_t needed = text->len + more + 1;
    if (needed <= text->cap) return;
    size_t cap = text->cap < 64 ? 64 : text->cap;
    while (cap < needed) cap *= 2;
    char *grown = realloc(text->ptr, cap);
    if (grown == NULL) abort();  // a trap: the host reports the call as an error
    text->ptr = grown;
    text->cap = cap;
}

void text_push_bytes(text_t *text, const void *bytes, size_t len) {
    reserve(text, len);
    memcpy(text->ptr + text->len, bytes, len);
    text->len += len;
    text->ptr[text->len] = '\0';
}

void text_push(text_t *text, const char *s) { text_push_bytes(text, s, strlen(s)); }

void text_push_quoted(text_t *text, const void *bytes, size_t len, size_t max) {
    const uint8_t *b = bytes;
    size_t shown = len;
    if (shown > max) {
        shown = max;
        while (shown > 0 && (b[shown] & 0xC0) == 0x80) shown--;  // not inside a character
    }
    text_push(text, "\"");
    for (size_t i = 0; i < shown; i++) {
        const char *escape = NULL;
        switch (b[i]) {
            case '"': escape = "\\\""; break;
            case '\\': escape = "\\\\"; break;
            case '\n': escape = "\\n"; break;
            case '\r': escape = "\\r"; break;
            case '\t': escape = "\\t"; break;
            case '\b': escape = "\\b"; break;
            case '\f': escape = "\\f"; break;
            default: break;
        }
        if (escape != NULL) {
            text_push(text, escape);
        } else if (b[i] < 0x20) {
            char code[7] = "\\u00";
            code[4] = "0123456789abcdef"[b[i] >> 4];
            code[5] = "0123456789abcdef"[b[i] & 0xF];
            code[6] = '\0';
            text_push(text, code);
        } else {
            text_push_bytes(text, &b[i], 1);
        }
    }
    text_push(text, shown < len ? "...\"" : "\"");
}

void text_push_fixed2(text_t *text, double number) {
    unsigned long long hundredths = number > 0 ? (unsigned long long)(number * 100 + 0.5) : 0;
    char digits[32];
    size_t n = sizeof digits;
    digits[--n] = (char)('0' + hundredths % 10);
    digits[--n] = (char)('0' + hundredths / 10 % 10);
    digits[--n] = '.';
    unsigned long long whole = hundredths / 100;
    do {
        digits[--n] = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole > 0);
    text_push_bytes(text, digits + n, sizeof digits - n);
}

void text_into(text_t *text, grader_string_t *out) {
    if (text->len == 0) text_free(text);  // the bindings free only what has a length
    out->ptr = (uint8_t *)text->ptr;
    out->len = text->len;
    text->ptr = NULL;
    text->len = text->cap = 0;
}

void text_free(text_t *text) {
    free(text->ptr);
    text->ptr = NULL;
    text->len = text->cap = 0;
}
