/* SPDX-License-Identifier: MIT */
/* Error codes, aborting allocation and wire-format name helpers. */
#include "common/util.h"
#include "common/hash.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

const char *gslb_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case GSLB_EPARSE: return "parse error";
	default: return strerror(-err);
	}
}

static void oom(void)
{
	fputs("gslbd: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	return xmemdup(s, strlen(s) + 1);
}

void *xmemdup(const void *p, size_t n)
{
	void *q = xmalloc(n);
	memcpy(q, p, n);
	return q;
}

const uint8_t dname_lower[256] = {
#define R(x) x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7
	R(0), R(8), R(16), R(24), R(32), R(40), R(48), R(56),
	64, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm',
	'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z',
	91, 92, 93, 94, 95,
	R(96), R(104), R(112), R(120),
	R(128), R(136), R(144), R(152), R(160), R(168), R(176), R(184),
	R(192), R(200), R(208), R(216), R(224), R(232), R(240), R(248),
#undef R
};

size_t dname_len(const uint8_t *n, size_t max)
{
	size_t len = 0;
	for (;;) {
		if (len >= max || n[len] > 63)
			return 0;
		if (n[len] == 0)
			return len + 1 <= DNAME_MAXLEN ? len + 1 : 0;
		len += (size_t)n[len] + 1;
	}
}

unsigned dname_labels(const uint8_t *n)
{
	unsigned c = 0;
	while (*n) {
		n += *n + 1;
		c++;
	}
	return c;
}

size_t dname_copy_lower(uint8_t *dst, const uint8_t *src)
{
	size_t n = 0;
	while (src[n])
		n += src[n] + 1u;
	n++;
	/* Eight bytes at a time: length bytes are < 'A', so lowercasing
	 * whole words leaves them alone. */
	size_t i = 0;
	uint64_t w;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, src + i, 8);
		w = hash_lower8(w);
		memcpy(dst + i, &w, 8);
	}
	for (; i < n; i++)
		dst[i] = dname_lower[src[i]];
	return n;
}

int dname_equal(const uint8_t *a, const uint8_t *b)
{
	for (;;) {
		if (*a != *b)
			return 0;
		uint8_t l = *a;
		if (!l)
			return 1;
		a++, b++;
		for (uint8_t k = 0; k < l; k++, a++, b++)
			if (dname_lower[*a] != dname_lower[*b])
				return 0;
	}
}

const uint8_t *dname_suffix(const uint8_t *n, unsigned keep)
{
	unsigned total = dname_labels(n);
	while (total > keep) {
		n += *n + 1;
		total--;
	}
	return n;
}

int dname_is_sub(const uint8_t *n, const uint8_t *zone)
{
	unsigned ln = dname_labels(n), lz = dname_labels(zone);
	if (ln < lz)
		return 0;
	return dname_equal(dname_suffix(n, lz), zone);
}

uint32_t dname_hash_len(const uint8_t *n, size_t len)
{
	return (uint32_t)hash_words(n, len, 1);
}

uint32_t dname_hash(const uint8_t *n)
{
	const uint8_t *e = n;
	while (*e)
		e += *e + 1;
	return dname_hash_len(n, (size_t)(e - n) + 1);
}

size_t dname_unpack(const uint8_t *pkt, size_t len, size_t *pos,
                    uint8_t *out)
{
	size_t p = *pos, o = 0, end = 0;
	unsigned jumps = 0;
	for (;;) {
		if (p >= len)
			return 0;
		uint8_t l = pkt[p];
		if ((l & 0xC0) == 0xC0) {
			if (p + 1 >= len || ++jumps > 64)
				return 0;
			size_t target = (size_t)(l & 0x3F) << 8 | pkt[p + 1];
			if (!end)
				end = p + 2;
			/* Only backward pointers: forward ones allow loops. */
			if (target >= p)
				return 0;
			p = target;
			continue;
		}
		if (l > 63)
			return 0;
		if (o + l + 1 > DNAME_MAXLEN || p + l + 1 > len)
			return 0;
		memcpy(out + o, pkt + p, (size_t)l + 1);
		o += (size_t)l + 1;
		p += (size_t)l + 1;
		if (!l)
			break;
	}
	*pos = end ? end : p;
	return o;
}

int dname_skip(const uint8_t *pkt, size_t len, size_t *pos)
{
	size_t p = *pos, total = 0;
	for (;;) {
		if (p >= len)
			return -1;
		uint8_t l = pkt[p];
		if ((l & 0xC0) == 0xC0) {
			if (p + 2 > len)
				return -1;
			*pos = p + 2;
			return 0;
		}
		if (l > 63 || (total += (size_t)l + 1) > DNAME_MAXLEN)
			return -1;
		p += (size_t)l + 1;
		if (!l) {
			*pos = p;
			return 0;
		}
	}
}

/* Bytes a presentation name shows as themselves: printable ASCII but
 * for the ones zone syntax gives a meaning (. \\ " ; ( ) $ @). */
static const uint8_t name_plain[256] = {
	['!'] = 1, ['#'] = 1, ['%' ... '\''] = 1, ['*' ... '-'] = 1,
	['/' ... ':'] = 1, ['<' ... '?'] = 1, ['A' ... '['] = 1, [']' ... '~'] = 1,
};

char *dname_to_str(const uint8_t *n, char *buf, size_t size)
{
	size_t o = 0;
	if (size < 2) {
		if (size)
			buf[0] = 0;
		return buf;
	}
	if (!*n) {
		buf[0] = '.', buf[1] = 0;
		return buf;
	}
	const uint8_t *plain = name_plain;
	while (*n && o + 5 < size) {
		uint8_t l = *n++;
		/* The usual label (letters, digits, hyphens) is copied whole;
		 * byte by byte only when one needs an escape. */
		uint8_t k = 0;
		if (o + l + 6 < size)
			while (k < l && plain[n[k]])
				k++;
		if (k == l) {
			memcpy(buf + o, n, l);
			o += l;
			n += l;
			buf[o++] = '.';
			continue;
		}
		for (k = 0; k < l && o + 5 < size; k++, n++) {
			uint8_t c = *n;
			if (plain[c])
				buf[o++] = (char)c;
			else if (c <= ' ' || c >= 0x7f)
				o += (size_t)snprintf(buf + o, size - o, "\\%03u", c);
			else
				buf[o++] = '\\', buf[o++] = (char)c;
		}
		buf[o++] = '.';
	}
	buf[o] = 0;
	return buf;
}

size_t dname_from_str(const char *s, uint8_t *out)
{
	size_t o = 0;
	if (strcmp(s, ".") == 0) {
		out[0] = 0;
		return 1;
	}
	while (*s) {
		size_t lp = o++;
		uint8_t l = 0;
		while (*s && *s != '.') {
			int c = (unsigned char)*s++;
			if (c == '\\' && *s) {
				if (isdigit((unsigned char)s[0]) &&
				    isdigit((unsigned char)s[1]) &&
				    isdigit((unsigned char)s[2])) {
					c = (s[0] - '0') * 100 + (s[1] - '0') * 10 +
					    (s[2] - '0');
					if (c > 255)
						return 0;
					s += 3;
				} else {
					c = (unsigned char)*s++;
				}
			}
			if (l == 63 || o + 2 > DNAME_MAXLEN)
				return 0;
			out[o++] = (uint8_t)c;
			l++;
		}
		if (l == 0)
			return 0; /* empty label */
		out[lp] = l;
		if (*s == '.')
			s++;
	}
	out[o++] = 0;
	return o <= DNAME_MAXLEN ? o : 0;
}

unsigned util_edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	/* Three rows of the table: two back, one back, this one. */
	unsigned *r = xcalloc(3 * (m + 1), sizeof(*r));
	unsigned *pp = r, *p = r + m + 1, *c = r + 2 * (m + 1);
	for (size_t j = 0; j <= m; j++)
		p[j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		c[0] = (unsigned)i;
		for (size_t j = 1; j <= m; j++) {
			unsigned d = p[j - 1] + (a[i - 1] != b[j - 1]);
			if (p[j] + 1 < d)
				d = p[j] + 1;
			if (c[j - 1] + 1 < d)
				d = c[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			c[j] = d;
		}
		unsigned *t = pp;
		pp = p;
		p = c;
		c = t;
	}
	unsigned d = p[m];
	free(r);
	return d;
}

const char *util_flags_text(const char *const *names, unsigned n, unsigned bits,
                            char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < n; i++)
		if (bits & (1u << i) && l < size)
			l += (size_t)snprintf(buf + l, size - l, "%s%s", l ? ", " : "", names[i]);
	if (!l)
		snprintf(buf, size, "-");
	return buf;
}
