/* locals.c — a native frame's variables from DWARF (see locals.h): the
 * scopes at the pc, each location expression evaluated on a small stack
 * machine with the frame's recovered registers, each value printed by its
 * type one level deep. */
#include "locals.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define MAXREAD 512   /* bytes of one value read at most */
#define MAXSTR 64     /* characters of a string shown */
#define MAXELEM 8     /* array elements shown */
#define MAXMEMB 16    /* struct members shown */

static const char *const regname[17] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
					 "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip" };

struct ctx {
	Dwarf_Addr bias;
	Dwarf_Addr a;           /* pc in the module's addresses */
	Dwarf_Die *fn;          /* the subprogram: its frame base */
	const struct sp_locals_regs *regs;
	struct sp_locals_mem *m;
};

/* 0 read, -1 unreadable, -2 not read (budget). */
static int mem_read(struct sp_locals_mem *m, uint64_t addr, void *buf, size_t n)
{
	if (m->stack && addr >= m->stack_lo && addr - m->stack_lo <= m->stack_len &&
	    n <= m->stack_len - (addr - m->stack_lo)) {
		memcpy(buf, m->stack + (addr - m->stack_lo), n);
		return 0;
	}
	if (addr < 4096 || addr + n < addr)
		return -1;
	if (n > m->budget || sp_budget_spent(&m->time)) {
		m->skipped++;
		return -2;
	}
	m->budget -= n;
	m->reads++;
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };
	return process_vm_readv(m->pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

static void bad_mem(struct sp_buf *out, int rc, uint64_t addr)
{
	sp_buf_addf(out, rc == -2 ? "<not read at 0x%llx: budget>" : "<unreadable at 0x%llx>", (unsigned long long)addr);
}

/* ---- location expressions ---- */

enum { L_MEM = 1, L_REG, L_VAL, L_IMPL, L_OPT, L_LOST, L_ERR };

struct loc {
	int kind;
	uint64_t v;             /* L_MEM address, L_VAL value, L_REG register */
	const uint8_t *impl;    /* L_IMPL bytes */
	size_t impl_len;
	char why[64];           /* L_LOST, L_ERR */
};

static int eval(struct ctx *c, Dwarf_Attribute *attr, const Dwarf_Op *ex, size_t len, struct loc *out, int depth);

/* The frame base of c->fn at c->a, as an address. */
static int frame_base(struct ctx *c, uint64_t *base, struct loc *out, int depth)
{
	Dwarf_Attribute fa;
	Dwarf_Op *fex;
	size_t flen;
	if (!c->fn || !dwarf_attr_integrate(c->fn, DW_AT_frame_base, &fa) ||
	    dwarf_getlocation_addr(&fa, c->a, &fex, &flen, 1) < 1) {
		out->kind = L_ERR;
		snprintf(out->why, sizeof out->why, "no frame base");
		return -1;
	}
	struct loc fb;
	memset(&fb, 0, sizeof fb);
	if (eval(c, &fa, fex, flen, &fb, depth + 1) < 0) {
		*out = fb;
		return -1;
	}
	if (fb.kind == L_MEM || fb.kind == L_VAL) {
		*base = fb.v;
		return 0;
	}
	if (fb.kind == L_REG) {
		*base = c->regs->r[fb.v];
		return 0;
	}
	*out = fb;
	return -1;
}

static int reg_value(struct ctx *c, unsigned reg, uint64_t *v, struct loc *out)
{
	if (reg > 16 || !(c->regs->known & (1u << reg))) {
		out->kind = L_LOST;
		snprintf(out->why, sizeof out->why, "<not recovered: in %s>", reg <= 16 ? regname[reg] : "a vector register");
		return -1;
	}
	*v = c->regs->r[reg];
	return 0;
}

/* Evaluate a DWARF location expression: 0 with out set, -1 with out set to
 * why not (L_OPT, L_LOST, L_ERR). */
static int eval(struct ctx *c, Dwarf_Attribute *attr, const Dwarf_Op *ex, size_t len, struct loc *out, int depth)
{
	uint64_t st[32], v;
	int sp = 0;
	memset(out, 0, sizeof *out);
	if (depth > 3)
		goto unsupported;
	if (!len) {
		out->kind = L_OPT;
		return -1;
	}
#define NEED(k) do { if (sp < (k)) goto unsupported; } while (0)
#define PUSH(x) do { uint64_t x_ = (x); if (sp == 32) goto unsupported; st[sp++] = x_; } while (0)
	for (size_t i = 0; i < len; i++) {
		uint8_t op = ex[i].atom;
		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH((uint64_t)(op - DW_OP_lit0));
		} else if ((op >= DW_OP_reg0 && op <= DW_OP_reg31) || op == DW_OP_regx) {
			unsigned r = op == DW_OP_regx ? (unsigned)ex[i].number : (unsigned)(op - DW_OP_reg0);
			if (i + 1 < len)
				goto unsupported; /* a piece of a value: not shown */
			if (reg_value(c, r, &v, out) < 0)
				return -1;
			out->kind = L_REG;
			out->v = r;
			return 0;
		} else if ((op >= DW_OP_breg0 && op <= DW_OP_breg31) || op == DW_OP_bregx) {
			unsigned r = op == DW_OP_bregx ? (unsigned)ex[i].number : (unsigned)(op - DW_OP_breg0);
			int64_t off = op == DW_OP_bregx ? (int64_t)ex[i].number2 : (int64_t)ex[i].number;
			if (reg_value(c, r, &v, out) < 0)
				return -1;
			PUSH(v + (uint64_t)off);
		} else {
			switch (op) {
			case DW_OP_addr: PUSH(ex[i].number + c->bias); break;
			case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u:
			case DW_OP_constu: case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
			case DW_OP_const8s: case DW_OP_consts:
				PUSH(ex[i].number);
				break;
			case DW_OP_fbreg:
				if (frame_base(c, &v, out, depth) < 0)
					return -1;
				PUSH(v + ex[i].number);
				break;
			case DW_OP_call_frame_cfa:
				if (!c->regs->cfa) {
					out->kind = L_LOST;
					snprintf(out->why, sizeof out->why, "<not recovered: frame address unknown>");
					return -1;
				}
				PUSH(c->regs->cfa);
				break;
			case DW_OP_plus_uconst: NEED(1); st[sp - 1] += ex[i].number; break;
			case DW_OP_plus: NEED(2); st[sp - 2] += st[sp - 1]; sp--; break;
			case DW_OP_minus: NEED(2); st[sp - 2] -= st[sp - 1]; sp--; break;
			case DW_OP_mul: NEED(2); st[sp - 2] *= st[sp - 1]; sp--; break;
			case DW_OP_and: NEED(2); st[sp - 2] &= st[sp - 1]; sp--; break;
			case DW_OP_or: NEED(2); st[sp - 2] |= st[sp - 1]; sp--; break;
			case DW_OP_xor: NEED(2); st[sp - 2] ^= st[sp - 1]; sp--; break;
			case DW_OP_shl: NEED(2); st[sp - 2] = st[sp - 1] < 64 ? st[sp - 2] << st[sp - 1] : 0; sp--; break;
			case DW_OP_shr: NEED(2); st[sp - 2] = st[sp - 1] < 64 ? st[sp - 2] >> st[sp - 1] : 0; sp--; break;
			case DW_OP_neg: NEED(1); st[sp - 1] = -st[sp - 1]; break;
			case DW_OP_not: NEED(1); st[sp - 1] = ~st[sp - 1]; break;
			case DW_OP_dup: NEED(1); PUSH(st[sp - 1]); break;
			case DW_OP_drop: NEED(1); sp--; break;
			case DW_OP_over: NEED(2); PUSH(st[sp - 2]); break;
			case DW_OP_swap: NEED(2); v = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = v; break;
			case DW_OP_deref:
			case DW_OP_deref_size: {
				NEED(1);
				size_t n = op == DW_OP_deref ? 8 : (size_t)ex[i].number;
				uint64_t x = 0;
				if (n > 8)
					goto unsupported;
				int rc = mem_read(c->m, st[sp - 1], &x, n);
				if (rc < 0) {
					out->kind = L_ERR;
					snprintf(out->why, sizeof out->why, "<%s at 0x%llx>",
						 rc == -2 ? "not read: budget" : "unreadable", (unsigned long long)st[sp - 1]);
					return -1;
				}
				st[sp - 1] = x;
				break;
			}
			case DW_OP_stack_value:
				NEED(1);
				out->kind = L_VAL;
				out->v = st[sp - 1];
				return 0;
			case DW_OP_implicit_value: {
				Dwarf_Block b;
				if (!attr || dwarf_getlocation_implicit_value(attr, &ex[i], &b) != 0)
					goto unsupported;
				out->kind = L_IMPL;
				out->impl = b.data;
				out->impl_len = b.length;
				return 0;
			}
			case DW_OP_entry_value:
			case DW_OP_GNU_entry_value:
			case DW_OP_GNU_parameter_ref:
			case DW_OP_implicit_pointer:
			case DW_OP_GNU_implicit_pointer:
				/* The value at the call, or one that has no address:
				 * not in this frame's registers or memory. */
				out->kind = L_OPT;
				return -1;
			case DW_OP_nop: break;
			default: goto unsupported;
			}
		}
	}
	NEED(1);
	out->kind = L_MEM;
	out->v = st[sp - 1];
	return 0;
unsupported:
	out->kind = L_ERR;
	snprintf(out->why, sizeof out->why, "<location not evaluated (DW_OP 0x%x%s)>", len ? ex[0].atom : 0,
		 len > 1 ? ", ..." : "");
	return -1;
#undef NEED
#undef PUSH
}

/* ---- values by their type ---- */

static int die_type(Dwarf_Die *d, Dwarf_Die *type)
{
	Dwarf_Attribute ta;
	Dwarf_Die t;
	if (!dwarf_attr_integrate(d, DW_AT_type, &ta) || !dwarf_formref_die(&ta, &t) || dwarf_peel_type(&t, type) != 0)
		return -1;
	return 0;
}

static uint64_t get_uint(const uint8_t *b, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, b, n < 8 ? n : 8);
	return v;
}

static int64_t get_int(const uint8_t *b, size_t n)
{
	uint64_t v = get_uint(b, n);
	if (n && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * n);
	return (int64_t)v;
}

static void add_char(struct sp_buf *out, unsigned char ch, char quote)
{
	if (ch == (unsigned char)quote || ch == '\\')
		sp_buf_addf(out, "\\%c", ch);
	else if (ch == '\n')
		sp_buf_adds(out, "\\n");
	else if (ch == '\t')
		sp_buf_adds(out, "\\t");
	else if (ch < 32 || ch >= 127)
		sp_buf_addf(out, "\\x%02x", ch);
	else
		sp_buf_addc(out, (char)ch);
}

/* A char type: 1 byte, a char encoding. */
static int is_char(Dwarf_Die *t)
{
	Dwarf_Attribute ea;
	Dwarf_Word enc = 0;
	if (dwarf_tag(t) != DW_TAG_base_type || dwarf_bytesize(t) != 1 || !dwarf_attr(t, DW_AT_encoding, &ea))
		return 0;
	dwarf_formudata(&ea, &enc);
	return enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char || enc == DW_ATE_UTF;
}

/* The bytes b[0..n) as a quoted string up to its NUL; more: the string
 * goes on past what was read. */
static void add_str(struct sp_buf *out, const uint8_t *b, size_t n, int more)
{
	size_t k = 0;
	sp_buf_addc(out, '"');
	for (; k < n && b[k] && k < MAXSTR; k++)
		add_char(out, b[k], '"');
	sp_buf_addc(out, '"');
	if (k == n ? more : k < n && b[k])
		sp_buf_adds(out, "...");
}

/* The string at addr, bounded: read in small pieces so that a string near
 * the end of a mapping is still shown. */
static void add_cstr(struct ctx *c, struct sp_buf *out, uint64_t addr)
{
	uint8_t b[MAXSTR + 1];
	size_t got = 0;
	int rc = 0;
	while (got < sizeof b) {
		size_t n = 16 - ((addr + got) & 15); /* up to the next 16-byte boundary */
		if (n > sizeof b - got)
			n = sizeof b - got;
		if ((rc = mem_read(c->m, addr + got, b + got, n)) < 0)
			break;
		got += n;
		if (memchr(b + got - n, 0, n))
			break;
	}
	if (!got) {
		bad_mem(out, rc, addr);
		return;
	}
	add_str(out, b, got, got == sizeof b);
	if (rc < 0 && !memchr(b, 0, got)) {
		sp_buf_addc(out, ' ');
		bad_mem(out, rc, addr + got);
	}
}

static void value(struct ctx *c, Dwarf_Die *type, const uint8_t *b, size_t n, int depth, struct sp_buf *out);

static void enum_value(Dwarf_Die *t, const uint8_t *b, size_t n, struct sp_buf *out)
{
	int64_t v = get_int(b, n);
	uint64_t u = get_uint(b, n);
	Dwarf_Die e;
	if (dwarf_child(t, &e) == 0) {
		do {
			Dwarf_Attribute ca;
			Dwarf_Sword sv;
			Dwarf_Word uv;
			if (dwarf_tag(&e) != DW_TAG_enumerator || !dwarf_attr(&e, DW_AT_const_value, &ca))
				continue;
			if ((dwarf_formsdata(&ca, &sv) == 0 && sv == v) || (dwarf_formudata(&ca, &uv) == 0 && uv == u)) {
				sp_buf_adds(out, dwarf_diename(&e) ? dwarf_diename(&e) : "?");
				return;
			}
		} while (dwarf_siblingof(&e, &e) == 0);
	}
	sp_buf_addf(out, "%lld", (long long)v);
}

static void base_value(Dwarf_Die *t, const uint8_t *b, size_t n, struct sp_buf *out)
{
	Dwarf_Attribute ea;
	Dwarf_Word enc = DW_ATE_unsigned;
	if (dwarf_attr(t, DW_AT_encoding, &ea))
		dwarf_formudata(&ea, &enc);
	switch (enc) {
	case DW_ATE_boolean: sp_buf_adds(out, get_uint(b, n) ? "true" : "false"); return;
	case DW_ATE_float:
		if (n == 4) {
			float f;
			memcpy(&f, b, 4);
			sp_buf_addf(out, "%.9g", (double)f);
		} else if (n == 8) {
			double d;
			memcpy(&d, b, 8);
			sp_buf_addf(out, "%.17g", d);
		} else if (n == 16 && sizeof(long double) == 16) {
			long double d;
			memcpy(&d, b, 16);
			sp_buf_addf(out, "%.21Lg", d);
		} else
			sp_buf_addf(out, "<float of %zu bytes>", n);
		return;
	case DW_ATE_signed_char:
	case DW_ATE_unsigned_char:
		if (n == 1) {
			sp_buf_addf(out, "%d '", enc == DW_ATE_signed_char ? (int)(int8_t)b[0] : (int)b[0]);
			add_char(out, b[0], '\'');
			sp_buf_addc(out, '\'');
			return;
		}
		/* fall through */
	case DW_ATE_signed:
		if (n <= 8) {
			sp_buf_addf(out, "%lld", (long long)get_int(b, n));
			return;
		}
		break;
	case DW_ATE_unsigned:
	case DW_ATE_UTF:
		if (n <= 8) {
			sp_buf_addf(out, "%llu", (unsigned long long)get_uint(b, n));
			return;
		}
		break;
	}
	sp_buf_adds(out, "0x");
	for (size_t k = n; k-- > 0;)
		sp_buf_addf(out, "%02x", b[k]);
}

static void pointer_value(struct ctx *c, Dwarf_Die *t, const uint8_t *b, size_t n, int depth, struct sp_buf *out)
{
	uint64_t p = get_uint(b, n);
	if (!p) {
		sp_buf_adds(out, "NULL");
		return;
	}
	sp_buf_addf(out, "0x%llx", (unsigned long long)p);
	Dwarf_Die to;
	if (die_type(t, &to) < 0)
		return;
	int tag = dwarf_tag(&to);
	if (is_char(&to)) {
		sp_buf_addc(out, ' ');
		add_cstr(c, out, p);
	} else if (depth == 0 && (tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type) &&
		   !dwarf_hasattr(&to, DW_AT_declaration)) {
		/* A struct by pointer: what it points to, one level. */
		Dwarf_Word sz;
		if (dwarf_aggregate_size(&to, &sz) != 0 || !sz)
			return;
		if (sz > MAXREAD)
			sz = MAXREAD;
		uint8_t buf[MAXREAD];
		sp_buf_adds(out, " -> ");
		int rc = mem_read(c->m, p, buf, sz);
		if (rc < 0)
			bad_mem(out, rc, p);
		else
			value(c, &to, buf, sz, depth + 1, out);
	}
}

static void struct_value(struct ctx *c, Dwarf_Die *t, const uint8_t *b, size_t n, int depth, struct sp_buf *out)
{
	Dwarf_Die m;
	if (depth >= 2 || dwarf_child(t, &m) != 0) {
		sp_buf_adds(out, "{...}");
		return;
	}
	int shown = 0;
	sp_buf_addc(out, '{');
	do {
		if (dwarf_tag(&m) != DW_TAG_member || dwarf_hasattr(&m, DW_AT_external))
			continue;
		if (shown == MAXMEMB) {
			sp_buf_adds(out, ", ...");
			break;
		}
		const char *name = dwarf_diename(&m);
		sp_buf_adds(out, shown++ ? ", " : "");
		if (name)
			sp_buf_addf(out, "%s = ", name);
		Dwarf_Attribute la;
		Dwarf_Word off = 0;
		Dwarf_Die mt;
		if (dwarf_attr_integrate(&m, DW_AT_data_member_location, &la) && dwarf_formudata(&la, &off) != 0) {
			sp_buf_adds(out, "<location not evaluated>");
			continue;
		}
		if (die_type(&m, &mt) < 0) {
			sp_buf_adds(out, "?");
			continue;
		}
		Dwarf_Word bits = 0, bitoff = 0;
		if (dwarf_attr_integrate(&m, DW_AT_bit_size, &la) && dwarf_formudata(&la, &bits) == 0 && bits &&
		    bits < 64) {
			/* a bit-field (DWARF 4's DW_AT_data_bit_offset) */
			if (dwarf_attr_integrate(&m, DW_AT_data_bit_offset, &la))
				dwarf_formudata(&la, &bitoff);
			bitoff += off * 8;
			if (bitoff / 8 + 8 > n && bitoff / 8 >= n) {
				sp_buf_adds(out, "<not read>");
				continue;
			}
			uint64_t w = get_uint(b + bitoff / 8, n - bitoff / 8);
			w = (w >> (bitoff % 8)) & ((1ull << bits) - 1);
			sp_buf_addf(out, "%llu", (unsigned long long)w);
			continue;
		}
		Dwarf_Word sz = 0;
		if (dwarf_aggregate_size(&mt, &sz) != 0)
			sz = 0;
		if (off > n || sz > n - off) {
			sp_buf_adds(out, "<not read>");
			continue;
		}
		value(c, &mt, b + off, sz, depth + 1, out);
	} while (dwarf_siblingof(&m, &m) == 0);
	sp_buf_addc(out, '}');
}

static void array_value(struct ctx *c, Dwarf_Die *t, const uint8_t *b, size_t n, int depth, struct sp_buf *out)
{
	Dwarf_Die et;
	Dwarf_Word total = 0, esz = 0;
	if (die_type(t, &et) < 0 || dwarf_aggregate_size(&et, &esz) != 0 || !esz ||
	    dwarf_aggregate_size(t, &total) != 0) {
		sp_buf_adds(out, "{...}");
		return;
	}
	Dwarf_Word count = total / esz;
	if (is_char(&et)) {
		add_str(out, b, n < count ? n : count, 0);
		return;
	}
	sp_buf_addc(out, '{');
	Dwarf_Word k = 0;
	for (; k < count && k < MAXELEM; k++) {
		if ((k + 1) * esz > n) {
			sp_buf_adds(out, k ? ", <not read>" : "<not read>");
			break;
		}
		if (k)
			sp_buf_adds(out, ", ");
		value(c, &et, b + k * esz, esz, depth + 1, out);
	}
	if (count > MAXELEM)
		sp_buf_addf(out, ", ... (%llu elements)", (unsigned long long)count);
	sp_buf_addc(out, '}');
}

static void value(struct ctx *c, Dwarf_Die *type, const uint8_t *b, size_t n, int depth, struct sp_buf *out)
{
	switch (dwarf_tag(type)) {
	case DW_TAG_base_type: base_value(type, b, n, out); break;
	case DW_TAG_enumeration_type: enum_value(type, b, n, out); break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_ptr_to_member_type:
		pointer_value(c, type, b, n, depth, out);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		struct_value(c, type, b, n, depth, out);
		break;
	case DW_TAG_array_type: array_value(c, type, b, n, depth, out); break;
	default:
		if (n && n <= 8)
			sp_buf_addf(out, "0x%llx", (unsigned long long)get_uint(b, n));
		else
			sp_buf_adds(out, "{...}");
	}
}

/* One piece of a value: n bytes at b.  -1 when it is not known. */
static int piece(struct ctx *c, Dwarf_Attribute *la, const Dwarf_Op *ex, size_t len, uint8_t *b, size_t n)
{
	struct loc l;
	if (!len || eval(c, la, ex, len, &l, 0) < 0)
		return -1;
	switch (l.kind) {
	case L_MEM: return mem_read(c->m, l.v, b, n) < 0 ? -1 : 0;
	case L_REG:
		if (n > 8)
			return -1;
		memcpy(b, &c->regs->r[l.v], n);
		return 0;
	case L_VAL: memcpy(b, &l.v, n < 8 ? n : 8); return 0;
	case L_IMPL: memcpy(b, l.impl, l.impl_len < n ? l.impl_len : n); return 0;
	}
	return -1;
}

/* Variable v (a DW_TAG_variable or formal_parameter): its value as text. */
static void var_value(struct ctx *c, Dwarf_Die *v, struct sp_buf *out)
{
	Dwarf_Die type;
	if (die_type(v, &type) < 0) {
		sp_buf_adds(out, "<type unknown>");
		return;
	}
	Dwarf_Word size = 0;
	if (dwarf_aggregate_size(&type, &size) != 0 || !size) {
		sp_buf_adds(out, "<size unknown>");
		return;
	}
	size_t n = size > MAXREAD ? MAXREAD : (size_t)size;
	uint8_t buf[MAXREAD];
	memset(buf, 0, sizeof buf);
	Dwarf_Attribute la;
	Dwarf_Op *ex;
	size_t len;
	if (!dwarf_attr_integrate(v, DW_AT_location, &la)) {
		Dwarf_Attribute ca;
		Dwarf_Block blk;
		Dwarf_Sword sv;
		if (!dwarf_attr_integrate(v, DW_AT_const_value, &ca)) {
			sp_buf_adds(out, "<optimized out>");
			return;
		}
		if (dwarf_formblock(&ca, &blk) == 0) {
			memcpy(buf, blk.data, blk.length < n ? blk.length : n);
		} else if (dwarf_formsdata(&ca, &sv) == 0) {
			memcpy(buf, &sv, n < 8 ? n : 8);
		} else {
			sp_buf_adds(out, "<optimized out>");
			return;
		}
		value(c, &type, buf, n, 0, out);
		return;
	}
	if (dwarf_getlocation_addr(&la, c->a, &ex, &len, 1) < 1) {
		sp_buf_adds(out, "<optimized out>");
		return;
	}
	size_t k = 0;
	while (k < len && ex[k].atom != DW_OP_piece)
		k++;
	if (k < len) {
		/* In pieces (parts of a struct in registers...): each part is
		 * evaluated on its own and copied into place. */
		size_t at = 0, start = 0;
		int missing = 0, pieces = 0;
		for (size_t i = 0; i < len; i++) {
			if (ex[i].atom != DW_OP_piece)
				continue;
			pieces++;
			size_t pn = (size_t)ex[i].number;
			if (at + pn > n)
				pn = at < n ? n - at : 0;
			if (piece(c, &la, ex + start, i - start, buf + at, pn) < 0)
				missing++;
			at += (size_t)ex[i].number;
			start = i + 1;
		}
		if (missing) {
			sp_buf_adds(out, missing == pieces ? "<optimized out>" : "<optimized out in part>");
			return;
		}
		value(c, &type, buf, n, 0, out);
		return;
	}
	struct loc l;
	if (eval(c, &la, ex, len, &l, 0) < 0) {
		sp_buf_adds(out, l.kind == L_OPT ? "<optimized out>" : l.why);
		return;
	}
	switch (l.kind) {
	case L_MEM: {
		int rc = mem_read(c->m, l.v, buf, n);
		if (rc < 0) {
			bad_mem(out, rc, l.v);
			return;
		}
		break;
	}
	case L_REG:
		if (n > 8) {
			sp_buf_addf(out, "<in %s and more registers>", regname[l.v]);
			return;
		}
		memcpy(buf, &c->regs->r[l.v], n);
		break;
	case L_VAL: memcpy(buf, &l.v, n < 8 ? n : 8); break;
	case L_IMPL: memcpy(buf, l.impl, l.impl_len < n ? l.impl_len : n); break;
	}
	value(c, &type, buf, n, 0, out);
}

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	return dwarf_attr_integrate(d, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
}

static int ends_group(Dwarf_Die *s)
{
	int tag = dwarf_tag(s);
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

int sp_locals_frame(void *dwfl, uint64_t pc, int group, const struct sp_locals_regs *regs, struct sp_locals_mem *m,
		    struct sp_buf *out, int *ngroups)
{
	if (ngroups)
		*ngroups = 0;
	Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, pc, &bias) : NULL;
	Dwarf_Die *scopes = NULL;
	int ns = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	if (ns <= 0) {
		free(scopes);
		return 0;
	}
	/* scopes[lo..hi] are group `group`, innermost first; the function is
	 * the first subprogram (its frame base, for every inlined group). */
	int g = 0, lo = -1, hi = -1, fn = -1;
	for (int i = 0; i < ns; i++) {
		if (g == group && lo < 0)
			lo = i;
		if (g == group)
			hi = i;
		if (fn < 0 && dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			fn = i;
		if (ends_group(&scopes[i])) {
			g++;
			if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
				break;
		}
	}
	if (ngroups)
		*ngroups = g;
	int nvars = 0;
	if (lo < 0 || fn < 0) {
		free(scopes);
		return 0;
	}
	struct ctx c = { bias, pc - bias, &scopes[fn], regs, m };
	/* Outermost scope first: parameters, then the blocks' variables. */
	for (int i = hi; i >= lo; i--) {
		Dwarf_Die d;
		if (dwarf_child(&scopes[i], &d) != 0)
			continue;
		do {
			int tag = dwarf_tag(&d);
			if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
				continue;
			if (dwarf_hasattr(&d, DW_AT_declaration))
				continue; /* an extern declared inside the function */
			const char *name = die_name(&d);
			if (!name)
				continue;
			sp_buf_add(out, name, strlen(name) + 1);
			var_value(&c, &d, out);
			sp_buf_addc(out, 0);
			nvars++;
		} while (dwarf_siblingof(&d, &d) == 0);
	}
	free(scopes);
	return nvars;
}

static int prepare_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	Dwarf_Addr bias = 0;
	/* Its DWARF, and libdwfl's table from addresses to compilation units. */
	if (dwfl_module_getdwarf(mod, &bias))
		(void)dwfl_module_addrdie(mod, start, &bias);
	(void)dwfl_module_getsymtab(mod);
	return DWARF_CB_OK;
}

const char *sp_locals_function(void *dwfl, uint64_t pc)
{
	Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
	return mod ? dwfl_module_addrname(mod, pc) : NULL;
}

void sp_locals_prepare(void *dwfl)
{
	if (dwfl)
		dwfl_getmodules(dwfl, prepare_module, NULL, 0);
}
