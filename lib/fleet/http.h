/* http.h — a small HTTP/1.1 client: one POST per connection (Connection:
 * close), for ClickHouse's HTTP interface (pfleet).  Plain http only.
 *
 * Errors come back in an sp_err; a transport failure says whether the
 * request body was written whole before the connection failed (the server
 * may then have acted on it: the caller must find out before sending it
 * again).
 */
#ifndef SP_HTTP_H
#define SP_HTTP_H

#include "util.h"

struct sp_http_url {
	char host[256];
	char port[16];
	char path[256]; /* "/" when the URL has none */
};

/* "http://HOST[:PORT][/PATH]" (PORT 8123 when absent: ClickHouse's). */
int sp_http_url_parse(const char *url, struct sp_http_url *u, struct sp_err *err);

enum {
	SP_HTTP_OK = 0,        /* a response came: see *status */
	SP_HTTP_REFUSED = -1,  /* no connection: nothing was sent */
	SP_HTTP_CUT = -2,      /* the connection broke after the body was written whole */
	SP_HTTP_BROKEN = -3,   /* the connection broke while the body was written */
};
/* POST body[0..n) to u->path + query ("?a=b&c=d", may be NULL).  The
 * response body (chunked or not) replaces the contents of resp; *status
 * gets the HTTP status.  timeout_ms bounds the connect and each read or
 * write.  Returns one of the SP_HTTP_ values; err says what failed. */
int sp_http_post(const struct sp_http_url *u, const char *query, const void *body, size_t n,
		 int timeout_ms, int *status, struct sp_buf *resp, struct sp_err *err);

/* The same with the body's Content-Type (NULL: application/octet-stream). */
int sp_http_post_type(const struct sp_http_url *u, const char *query, const char *ctype, const void *body, size_t n,
		      int timeout_ms, int *status, struct sp_buf *resp, struct sp_err *err);

/* Appends s to b percent-encoded for a URL's query. */
void sp_http_urlencode(struct sp_buf *b, const char *s, size_t n);

#endif
