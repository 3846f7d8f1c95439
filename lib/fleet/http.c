/* http.c — see http.h.  One request per connection keeps the client small:
 * pfleet sends batches of hundreds of kilobytes, where a connect to the
 * server costs little beside the request. */
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int sp_http_url_parse(const char *url, struct sp_http_url *u, struct sp_err *err)
{
	memset(u, 0, sizeof *u);
	if (strncmp(url, "http://", 7))
		return sp_err_set(err, "%s: not an http:// URL (ClickHouse's HTTP address, http://HOST:8123)", url), -1;
	const char *h = url + 7, *e = h + strcspn(h, "/?#");
	const char *colon = NULL;
	if (*h == '[') { /* [IPv6]:port */
		const char *rb = memchr(h, ']', (size_t)(e - h));
		if (!rb)
			return sp_err_set(err, "%s: no ']' after the IPv6 address", url), -1;
		if (rb + 1 < e && rb[1] == ':')
			colon = rb + 1;
		if ((size_t)(rb - h - 1) >= sizeof u->host)
			return sp_err_set(err, "%s: host name too long", url), -1;
		memcpy(u->host, h + 1, (size_t)(rb - h - 1));
	} else {
		colon = memchr(h, ':', (size_t)(e - h));
		const char *he = colon ? colon : e;
		if ((size_t)(he - h) >= sizeof u->host)
			return sp_err_set(err, "%s: host name too long", url), -1;
		memcpy(u->host, h, (size_t)(he - h));
	}
	if (!u->host[0])
		return sp_err_set(err, "%s: no host in the URL", url), -1;
	if (colon) {
		size_t n = (size_t)(e - colon - 1);
		if (!n || n >= sizeof u->port || strspn(colon + 1, "0123456789") < n)
			return sp_err_set(err, "%s: the port is not a number", url), -1;
		memcpy(u->port, colon + 1, n);
	} else {
		strcpy(u->port, "8123");
	}
	size_t pn = *e == '/' ? strcspn(e, "?#") : 0;
	if (pn >= sizeof u->path)
		return sp_err_set(err, "%s: path too long", url), -1;
	if (pn)
		memcpy(u->path, e, pn);
	else
		strcpy(u->path, "/");
	return 0;
}

void sp_http_urlencode(struct sp_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-_.~", c)) {
			sp_buf_addc(b, (char)c);
		} else {
			sp_buf_addc(b, '%');
			sp_buf_addc(b, hex[c >> 4]);
			sp_buf_addc(b, hex[c & 15]);
		}
	}
}

/* Connect with a bound on the time (a host that drops packets would hold a
 * blocking connect for minutes). */
static int dial(const struct sp_http_url *u, int timeout_ms, struct sp_err *err)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int g = getaddrinfo(u->host, u->port, &hints, &res);
	if (g)
		return sp_err_set(err, "cannot resolve %s: %s", u->host, gai_strerror(g)), -1;
	int fd = -1, e = 0;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			struct pollfd pf = { fd, POLLOUT, 0 };
			int r = poll(&pf, 1, timeout_ms);
			socklen_t l = sizeof e;
			if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) == 0 && e == 0)
				break;
			if (r == 0)
				e = ETIMEDOUT;
		} else {
			e = errno;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return sp_err_set(err, "cannot connect to %s:%s: %s", u->host, u->port, strerror(e ? e : ECONNREFUSED)), -1;
	return fd;
}

/* Waits until fd is ready for ev; 0, or -1 with errno (ETIMEDOUT). */
static int wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd pf = { fd, ev, 0 };
	for (;;) {
		int r = poll(&pf, 1, timeout_ms);
		if (r > 0)
			return 0;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (errno != EINTR)
			return -1;
	}
}

static int send_all(int fd, const char *p, size_t n, int timeout_ms)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd, POLLOUT, timeout_ms) == 0)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Decodes a chunked body in place; -1 when malformed or cut short. */
static int unchunk(struct sp_buf *b, size_t start)
{
	char *p = b->p + start, *e = b->p + b->len, *o = p;
	for (;;) {
		char *nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl)
			return -1;
		char *end;
		unsigned long long n = strtoull(p, &end, 16);
		if (end == p)
			return -1;
		p = nl + 1;
		if (!n)
			break;
		if ((size_t)(e - p) < n + 2)
			return -1;
		memmove(o, p, n);
		o += n;
		p += n + 2;
	}
	b->len = (size_t)(o - b->p);
	return 0;
}

int sp_http_post(const struct sp_http_url *u, const char *query, const void *body, size_t n,
		 int timeout_ms, int *status, struct sp_buf *resp, struct sp_err *err)
{
	return sp_http_post_type(u, query, NULL, body, n, timeout_ms, status, resp, err);
}

int sp_http_post_type(const struct sp_http_url *u, const char *query, const char *ctype, const void *body, size_t n,
		      int timeout_ms, int *status, struct sp_buf *resp, struct sp_err *err)
{
	*status = 0;
	sp_buf_reset(resp);
	int fd = dial(u, timeout_ms, err);
	if (fd < 0)
		return SP_HTTP_REFUSED;
	char head[1024];
	int hn = snprintf(head, sizeof head,
			  "POST %s%s HTTP/1.1\r\nHost: %s:%s\r\nContent-Length: %zu\r\n"
			  "Content-Type: %s\r\nConnection: close\r\n\r\n",
			  u->path, query ? query : "", u->host, u->port, n, ctype ? ctype : "application/octet-stream");
	if (hn < 0 || (size_t)hn >= sizeof head) {
		close(fd);
		return sp_err_set(err, "request line too long"), SP_HTTP_REFUSED;
	}
	if (send_all(fd, head, (size_t)hn, timeout_ms) < 0 || send_all(fd, body, n, timeout_ms) < 0) {
		int e = errno;
		close(fd);
		sp_err_set(err, "%s:%s: the connection broke while sending: %s", u->host, u->port, strerror(e));
		return SP_HTTP_BROKEN;
	}
	/* The response, whole (Connection: close ends it). */
	for (;;) {
		sp_buf_grow(resp, 65536);
		ssize_t r = recv(fd, resp->p + resp->len, resp->cap - resp->len, 0);
		if (r > 0) {
			resp->len += (size_t)r;
			continue;
		}
		if (r == 0)
			break;
		if (errno == EINTR)
			continue;
		if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd, POLLIN, timeout_ms) == 0)
			continue;
		int e = errno;
		close(fd);
		sp_err_set(err, "%s:%s: no answer to the request: %s", u->host, u->port, strerror(e));
		return SP_HTTP_CUT;
	}
	close(fd);
	size_t hl = 0;
	for (size_t i = 0; i + 3 < resp->len; i++)
		if (!memcmp(resp->p + i, "\r\n\r\n", 4)) {
			hl = i + 4;
			break;
		}
	if (!hl || resp->len < 12 || memcmp(resp->p, "HTTP/1.", 7)) {
		sp_err_set(err, "%s:%s: the connection closed before a complete answer (%zu bytes)", u->host, u->port, resp->len);
		return SP_HTTP_CUT;
	}
	*status = atoi(resp->p + 9);
	int chunked = 0;
	long long clen = -1;
	for (const char *l = memchr(resp->p, '\n', hl) + 1; l < resp->p + hl - 2;) {
		const char *nl = memchr(l, '\n', (size_t)(resp->p + hl - l));
		if (!strncasecmp(l, "transfer-encoding:", 18) && memmem(l, (size_t)(nl - l), "chunked", 7))
			chunked = 1;
		else if (!strncasecmp(l, "content-length:", 15))
			clen = atoll(l + 15);
		l = nl + 1;
	}
	memmove(resp->p, resp->p + hl, resp->len - hl);
	resp->len -= hl;
	if (chunked ? unchunk(resp, 0) < 0 : (clen >= 0 && (size_t)clen > resp->len)) {
		sp_err_set(err, "%s:%s: the answer was cut short", u->host, u->port);
		return SP_HTTP_CUT;
	}
	if (!chunked && clen >= 0)
		resp->len = (size_t)clen;
	return SP_HTTP_OK;
}
