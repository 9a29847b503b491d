/* tc_json.c - just enough JSON to validate the statistics line and read values from it. */
#include "tc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *value(const char *p, int depth);

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static const char *string(const char *p)
{
    if (*p++ != '"') return NULL;
    for (; *p && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i])) return NULL;
                p += 4;
            } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *number(const char *p)
{
    const char *s = p;
    if (*p == '-') p++;
    if (!isdigit((unsigned char)*p)) return NULL;
    if (*p == '0')
        p++;
    else
        while (isdigit((unsigned char)*p))
            p++;
    if (*p == '.') {
        if (!isdigit((unsigned char)*++p)) return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return p > s ? p : NULL;
}

/* Object or array members; for objects every member is "key": value. */
static const char *members(const char *p, char close, int depth)
{
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (close == '}') {
            p = string(ws(p));
            if (!p || *(p = ws(p)) != ':') return NULL;
            p++;
        }
        p = value(p, depth + 1);
        if (!p) return NULL;
        p = ws(p);
        if (*p == close) return p + 1;
        if (*p != ',') return NULL;
        p++;
    }
}

static const char *value(const char *p, int depth)
{
    p = ws(p);
    if (depth > 32) return NULL;
    switch (*p) {
    case '{':
        return members(p, '}', depth);
    case '[':
        return members(p, ']', depth);
    case '"':
        return string(p);
    case 't':
        return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f':
        return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n':
        return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default:
        return number(p);
    }
}

bool tc_json_valid(const char *s)
{
    const char *end = value(s, 0);
    return end && *ws(end) == '\0' && *ws(s) == '{';
}

/* Find the member named by the first segment of path in the object at p, or the element it
 * numbers (from 0) in the array at p. */
const char *tc_json_find(const char *p, const char *path)
{
    const char *dot = strchr(path, '.');
    size_t seg = dot ? (size_t)(dot - path) : strlen(path);
    p = ws(p);
    if (*p == '[' && seg > 0 && strspn(path, "0123456789") == seg) {
        p = ws(p + 1);
        for (long i = strtol(path, NULL, 10); i > 0 && p && *p != ']'; i--) {
            p = value(p, 0);
            if (!p || *(p = ws(p)) != ',') return NULL;
            p = ws(p + 1);
        }
        if (!p || *p == ']') return NULL;
        return dot ? tc_json_find(p, dot + 1) : p;
    }
    if (*p != '{') return NULL;
    p = ws(p + 1);
    while (*p == '"') {
        const char *key = p + 1, *kend = string(p);
        if (!kend || *(p = ws(kend)) != ':') return NULL;
        const char *v = ws(p + 1);
        if ((size_t)(kend - 1 - key) == seg && strncmp(key, path, seg) == 0)
            return dot ? tc_json_find(v, dot + 1) : v;
        p = value(v, 0);
        if (!p || *(p = ws(p)) != ',') return NULL;
        p = ws(p + 1);
    }
    return NULL;
}

bool tc_json_u64(const char *s, const char *path, uint64_t *out)
{
    const char *v = tc_json_find(s, path);
    if (!v || !isdigit((unsigned char)*v)) return false;
    *out = strtoull(v, NULL, 10);
    return true;
}

uint64_t tc_stat(struct tc_server *s, const char *path)
{
    uint64_t v = 0;
    ASSERT_MSG(tc_json_u64(s->json, path, &v), "no number at '%s' in %s", path, s->json);
    return v;
}
