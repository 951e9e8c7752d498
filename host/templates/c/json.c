// A reader of one JSON object of plain fields (see json.h).

#include "json.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *at;
    const uint8_t *end;
} cursor_t;

static void skip_space(cursor_t *c) {
    while (c->at < c->end && (*c->at == ' ' || *c->at == '\t' || *c->at == '\n' || *c->at == '\r'))
        c->at++;
}

static bool take(cursor_t *c, const char *word) {
    size_t len = strlen(word);
    if ((size_t)(c->end - c->at) < len || memcmp(c->at, word, len) != 0) return false;
    c->at += len;
    return true;
}

static void *grow(void *ptr, size_t size) {
    void *grown = realloc(ptr, size);
    if (grown == NULL) abort();  // a trap: the host reports the call as an error
    return grown;
}

// Four hex digits, or -1.
static long hex4(cursor_t *c) {
    if (c->end - c->at < 4) return -1;
    long value = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t d = *c->at++;
        value <<= 4;
        if (d >= '0' && d <= '9') value |= d - '0';
        else if (d >= 'a' && d <= 'f') value |= d - 'a' + 10;
        else if (d >= 'A' && d <= 'F') value |= d - 'A' + 10;
        else return -1;
    }
    return value;
}

// Appends the UTF-8 of `code` to `out`, which has room for 4 more bytes.
static size_t put_utf8(char *out, unsigned long code) {
    if (code < 0x80) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

// A string at the cursor (after its opening quote), decoded; NULL with `*problem` if bad.
static char *read_string(cursor_t *c, size_t *len, const char **problem) {
    // Decoded text is never longer than its JSON form.
    char *out = grow(NULL, (size_t)(c->end - c->at) + 1);
    size_t n = 0;
    while (c->at < c->end) {
        uint8_t b = *c->at++;
        if (b == '"') {
            out[n] = '\0';
            *len = n;
            return out;
        }
        if (b < 0x20) break;
        if (b != '\\') {
            out[n++] = (char)b;
            continue;
        }
        if (c->at == c->end) break;
        uint8_t e = *c->at++;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e != 0 && simple != NULL) {
            out[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            continue;
        }
        if (e != 'u') break;
        long code = hex4(c);
        if (code >= 0xD800 && code < 0xDC00 && take(c, "\\u")) {
            long low = hex4(c);
            if (low < 0xDC00 || low > 0xDFFF) break;
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code < 0 || (code >= 0xD800 && code < 0xE000)) {
            break;
        }
        n += put_utf8(out + n, (unsigned long)code);  // "\uXXXX" is 6 bytes, its UTF-8 at most 4
    }
    free(out);
    *problem = "a string is not valid JSON";
    return NULL;
}

static bool read_number(cursor_t *c, double *number) {
    const uint8_t *start = c->at;
    while (c->at < c->end && strchr("+-0123456789.eE", *c->at) != NULL && *c->at != 0) c->at++;
    size_t len = (size_t)(c->at - start);
    if (len == 0 || len > 64) return false;
    char copy[65];
    memcpy(copy, start, len);
    copy[len] = '\0';
    char *rest;
    *number = strtod(copy, &rest);
    return *rest == '\0';
}

static bool read_value(cursor_t *c, json_field_t *field, const char **problem) {
    if (take(c, "\"")) {
        field->kind = JSON_STRING;
        field->string = read_string(c, &field->string_len, problem);
        return field->string != NULL;
    }
    if (take(c, "true")) {
        field->kind = JSON_BOOL;
        field->boolean = true;
        return true;
    }
    if (take(c, "false")) {
        field->kind = JSON_BOOL;
        field->boolean = false;
        return true;
    }
    if (take(c, "null")) {
        field->kind = JSON_NULL;
        return true;
    }
    if (c->at < c->end && (*c->at == '{' || *c->at == '[')) {
        *problem = "a field holds an object or a list; expected a string, number, true, false or null";
        return false;
    }
    field->kind = JSON_NUMBER;
    if (!read_number(c, &field->number)) {
        *problem = "the text is not valid JSON";
        return false;
    }
    return true;
}

bool json_read_object(const uint8_t *text, size_t len, json_object_t *out, const char **problem) {
    cursor_t c = {text, text + len};
    out->fields = NULL;
    out->len = 0;
    skip_space(&c);
    if (take(&c, "null")) {
        skip_space(&c);
        if (c.at == c.end) return true;
    } else if (take(&c, "{")) {
        skip_space(&c);
        bool first = true;
        while (!take(&c, "}")) {
            if (!first && !take(&c, ",")) goto invalid;
            first = false;
            skip_space(&c);
            json_field_t field = {0};
            size_t key_len;
            if (!take(&c, "\"") || (field.key = read_string(&c, &key_len, problem)) == NULL)
                goto invalid;
            out->fields = grow(out->fields, (out->len + 1) * sizeof *out->fields);
            out->fields[out->len++] = field;
            skip_space(&c);
            if (!take(&c, ":")) goto invalid;
            skip_space(&c);
            if (!read_value(&c, &out->fields[out->len - 1], problem)) goto failed;
            skip_space(&c);
        }
        skip_space(&c);
        if (c.at == c.end) return true;
    }
invalid:
    *problem = "the text is not a JSON object";
failed:
    json_object_free(out);
    return false;
}

const json_field_t *json_field(const json_object_t *object, const char *key) {
    for (size_t i = 0; i < object->len; i++) {
        if (strcmp(object->fields[i].key, key) == 0) return &object->fields[i];
    }
    return NULL;
}

void json_object_free(json_object_t *object) {
    for (size_t i = 0; i < object->len; i++) {
        free(object->fields[i].key);
        free(object->fields[i].string);
    }
    free(object->fields);
    object->fields = NULL;
    object->len = 0;
}
