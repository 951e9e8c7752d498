// Building a grader's messages: a growing string, quoting and excerpts in the shape every
// evalhost report uses (`<grader> <arg>: <what was seen>`), handed to the host as a
// grader_string_t. No printf: stdio would import WASI, which this grader does not need.

#ifndef TEXT_H
#define TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "grader.h"

// Bytes of text an excerpt keeps before it is cut and `...` is appended.
#define EXCERPT_BYTES 120

typedef struct {
    char *ptr;  // malloc'd; NUL-terminated once anything was pushed
    size_t len;
    size_t cap;
} text_t;

// Appends a NUL-terminated string.
void text_push(text_t *text, const char *s);

// Appends `len` bytes.
void text_push_bytes(text_t *text, const void *bytes, size_t len);

// Appends `len` bytes quoted as a JSON string; past `max` bytes (cut on a UTF-8 character's
// boundary) with `...` before the closing quote.
void text_push_quoted(text_t *text, const void *bytes, size_t len, size_t max);

// Appends a number from 0 up with two decimals, e.g. `0.90`.
void text_push_fixed2(text_t *text, double number);

// Hands the text over as a grader string (the bindings free it once the host has read it)
// and leaves `text` empty.
void text_into(text_t *text, grader_string_t *out);

void text_free(text_t *text);

#endif
