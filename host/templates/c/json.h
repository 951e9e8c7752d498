// Reading one JSON object of plain fields: a grader's config as the host sends it (compact
// JSON made from the case file's YAML), or the judge's answer. A field's value is a string,
// a number, true, false or null; a nested object or array is refused. The text `null` reads
// as an object without fields.

#ifndef JSON_H
#define JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { JSON_STRING, JSON_NUMBER, JSON_BOOL, JSON_NULL } json_kind_t;

typedef struct {
    char *key;           // malloc'd, NUL-terminated
    json_kind_t kind;
    char *string;        // JSON_STRING: the decoded UTF-8, malloc'd, NUL-terminated
    size_t string_len;   // its length in bytes (it may hold a NUL)
    double number;       // JSON_NUMBER
    bool boolean;        // JSON_BOOL
} json_field_t;

typedef struct {
    json_field_t *fields;
    size_t len;
} json_object_t;

// Reads `len` bytes of `text` into `out` (free it with json_object_free). On failure returns
// false with `*problem` saying what is wrong (a static string) and `out` empty.
bool json_read_object(const uint8_t *text, size_t len, json_object_t *out, const char **problem);

// The field named `key`, or NULL.
const json_field_t *json_field(const json_object_t *object, const char *key);

void json_object_free(json_object_t *object);

#endif
