# stackpipe — plain Makefile.  Targets: all deps check install uninstall clean
# bench fuzz demo accuracy.  Flags come from pkg-config; see README.md.
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(PREFIX)/bin
MANDIR   = $(PREFIX)/share/man

CC      ?= cc
PKGS     = libdw libelf libxxhash libcjson zlib
# Computed once when make reads this file.  Targets that install packages
# first (deps) build in a second make, which reads pkg-config afresh: on a
# machine that lacked the -dev packages, the first `make demo` must work.
PKG_OK     := $(shell pkg-config --exists $(PKGS) 2>/dev/null && echo yes)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2
# The library's rooms (README.md, Layout): lib/<room>/ and formats/.  A header
# is included by its bare name; tests/cmd/t0162-layers.sh checks that every
# include goes down the layers (commands -> engine, transform -> formats -> core).
ROOMS    = lib/core formats lib/transform lib/capture lib/python lib/engine lib/fleet lib/cli
INCS     = $(addprefix -I,$(ROOMS))
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(INCS) $(PKG_CFLAGS)
LIBS     = $(PKG_LIBS) -lpthread -lm

# Every command is cmd/<name>.c; every library source is lib/<room>/*.c or formats/*.c.
CMDS     = $(patsubst cmd/%.c,%,$(wildcard cmd/*.c))
LIB_SRC  = $(wildcard $(addsuffix /*.c,$(ROOMS)))
UNIT_SRC = $(wildcard tests/unit/*.c)
FUZZ_SRC = $(wildcard tests/fuzz/*.c)
HDRS     = $(wildcard $(addsuffix /*.h,$(ROOMS)))

B        = build
BA       = build-asan
LIB_OBJ  = $(patsubst %.c,$(B)/%.o,$(LIB_SRC))
LIBA_OBJ = $(patsubst %.c,$(BA)/%.o,$(LIB_SRC))
BINS     = $(addprefix bin/,$(CMDS))
UNITS    = $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
UNITS_A  = $(patsubst tests/unit/%.c,$(BA)/tests/%,$(UNIT_SRC))
BINS_A   = $(addprefix $(BA)/bin/,$(CMDS))
# -fno-sanitize-recover=all: the first ASan or UBSan report ends the process
# with an error, so a test cannot pass with a report in its log.
ASAN     = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all deps check check-fast accuracy install uninstall clean bench fuzz demo asan pkgs
all: $(BINS) $(UNITS) bin/sp-dump

# Every compile needs the libraries; say which are missing instead of failing
# on a missing header or undefined references.
pkgs:
	@[ "$(PKG_OK)" = yes ] || { echo "stackpipe: missing development packages for: $$(for p in $(PKGS); do pkg-config --exists $$p 2>/dev/null || printf '%s ' $$p; done)"; echo "stackpipe: run 'make deps' (as root it installs them), or 'make demo'/'make check', which run it first"; exit 2; } >&2
$(LIB_OBJ) $(LIBA_OBJ): | pkgs

# Generated embedding of share/ files (the SVG's script and style, later).
$(B)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BA)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O1 $(ASAN) -c -o $@ $<

$(B)/libstackpipe.a: $(LIB_OBJ)
	@rm -f $@; ar rcs $@ $^
$(BA)/libstackpipe.a: $(LIBA_OBJ)
	@rm -f $@; ar rcs $@ $^

bin/%: cmd/%.c $(B)/libstackpipe.a $(HDRS)
	@mkdir -p bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libstackpipe.a $(LIBS)
$(BA)/bin/%: cmd/%.c $(BA)/libstackpipe.a $(HDRS)
	@mkdir -p $(BA)/bin
	$(CC) $(ALL_CFLAGS) -O1 $(ASAN) -o $@ $< $(BA)/libstackpipe.a $(LIBS)

# sp-dump: test helper that prints a binary stream as canonical text.
bin/sp-dump: tests/sp-dump.c $(B)/libstackpipe.a $(HDRS)
	@mkdir -p bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libstackpipe.a $(LIBS)
$(BA)/bin/sp-dump: tests/sp-dump.c $(BA)/libstackpipe.a $(HDRS)
	@mkdir -p $(BA)/bin
	$(CC) $(ALL_CFLAGS) -O1 $(ASAN) -o $@ $< $(BA)/libstackpipe.a $(LIBS)

$(B)/tests/%: tests/unit/%.c tests/unit/unit.h $(B)/libstackpipe.a $(HDRS)
	@mkdir -p $(B)/tests
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libstackpipe.a $(LIBS)
$(BA)/tests/%: tests/unit/%.c tests/unit/unit.h $(BA)/libstackpipe.a $(HDRS)
	@mkdir -p $(BA)/tests
	$(CC) $(ALL_CFLAGS) -O1 $(ASAN) -o $@ $< $(BA)/libstackpipe.a $(LIBS)

asan: $(BINS_A) $(UNITS_A) $(BA)/bin/sp-dump

# ---- psvg: share/svg/flame.js and flame.css embedded as C byte arrays ----
# (build/gen/svg_assets.c, made with od and sed so no xxd is needed), linked
# into psvg only: the library itself has no generated parts.
SVG_ASSETS = share/svg/flame.js share/svg/flame.css share/svg/heatmap.js
$(B)/gen/svg_assets.c: $(SVG_ASSETS)
	@mkdir -p $(dir $@)
	@{ for f in $(SVG_ASSETS); do n=$$(basename $$f | tr -c 'a-zA-Z0-9\n' '_'); \
	  echo "const unsigned char sp_asset_$$n[] = {"; \
	  od -An -v -tx1 $$f | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo "0 };"; echo "const unsigned long sp_asset_$${n}_len = sizeof sp_asset_$$n - 1;"; \
	  done; } > $@.tmp && mv $@.tmp $@
$(B)/gen/svg_assets.o: $(B)/gen/svg_assets.c
	$(CC) $(CFLAGS) -c -o $@ $<
bin/psvg: cmd/psvg.c $(B)/gen/svg_assets.o $(B)/libstackpipe.a $(HDRS)
	@mkdir -p bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/gen/svg_assets.o $(B)/libstackpipe.a $(LIBS)
$(BA)/bin/psvg: cmd/psvg.c $(B)/gen/svg_assets.o $(BA)/libstackpipe.a $(HDRS)
	@mkdir -p $(BA)/bin
	$(CC) $(ALL_CFLAGS) -O1 $(ASAN) -o $@ $< $(B)/gen/svg_assets.o $(BA)/libstackpipe.a $(LIBS)
# ---- end of psvg's block ----

# ---- pcollect: cmd/pcollect.c plus the files of cmd/pcollect/ (its
# snapshot mode), which are parts of that one command, not commands ----
PCOLLECT_PARTS = $(wildcard cmd/pcollect/*.c) $(wildcard cmd/pcollect/*.h)
bin/pcollect: cmd/pcollect.c $(PCOLLECT_PARTS) $(B)/libstackpipe.a $(HDRS)
	@mkdir -p bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(filter %.c,$(PCOLLECT_PARTS)) $(B)/libstackpipe.a $(LIBS)
$(BA)/bin/pcollect: cmd/pcollect.c $(PCOLLECT_PARTS) $(BA)/libstackpipe.a $(HDRS)
	@mkdir -p $(BA)/bin
	$(CC) $(ALL_CFLAGS) -O1 $(ASAN) -o $@ $< $(filter %.c,$(PCOLLECT_PARTS)) $(BA)/libstackpipe.a $(LIBS)

# libFuzzer targets (clang).  One per parser.  -fno-sanitize-recover=all:
# the first UBSan report aborts the run like an ASan one (and libFuzzer writes
# the input that caused it); tests/fuzz/fuzz.sh makes any crash, sanitizer
# report, leak or timeout a failure and prints the reproducer's path.
FUZZ_CC ?= clang
# The library is compiled once (fuzzer-no-link) and linked into every target.
FUZZ_FLAGS = -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	     $(INCS) $(PKG_CFLAGS)
FUZZ_BINS = $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
FUZZ_OBJ  = $(patsubst %.c,$(B)/fuzzlib/%.o,$(LIB_SRC))
.SECONDARY: $(FUZZ_OBJ)
$(B)/fuzzlib/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<
$(B)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_reader.h $(FUZZ_OBJ) $(HDRS)
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LIBS)
FUZZ_SECONDS ?= 300
# make fuzz FUZZ_SECONDS=600 [FUZZ_TARGETS="fuzz_perf fuzz_stream"]
FUZZ_TARGETS ?= $(notdir $(FUZZ_BINS))
fuzz: $(FUZZ_BINS)
	@bash tests/fuzz/fuzz.sh $(FUZZ_SECONDS) $(addprefix $(B)/fuzz/,$(FUZZ_TARGETS))

deps:
	@sh tests/deps.sh

# deps first, then a new make that sees the packages deps installed.
check: deps
	@$(MAKE) --no-print-directory all asan $(FUZZ_BINS)
	@bash tests/run.sh

check-fast: all
	@SP_NO_ASAN=1 SP_NO_FUZZ=1 bash tests/run.sh

# The standing accuracy suite (issue 35): real programs profiled by us and
# by a peer or their own count of CPU time over the same seconds, each
# printing the distance and its noise floor.  make check runs their quick
# variants (plain pass); this runs the longer ones (SP_ACCURACY=long).
ACCURACY_TESTS = tests/cmd/t6600-pcollect-short-threads.sh tests/cmd/t6610-python-thread-server.sh \
	tests/cmd/t8090-go-accuracy.sh tests/cmd/t8091-sqlite-accuracy.sh tests/cmd/t8092-node-accuracy.sh \
	tests/cmd/t8093-pool-accuracy.sh
accuracy: deps
	@$(MAKE) --no-print-directory all
	@SP_ACCURACY=long SP_NO_UNITS=1 SP_NO_ASAN=1 SP_NO_FUZZ=1 SP_CMD_TESTS='$(ACCURACY_TESTS)' bash tests/run.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@bash tests/bench/bench.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@bash share/demo/demo.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(BINS) bin/sp-dump $(DESTDIR)$(BINDIR)/
	install -m 644 share/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 share/man/man5/*.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 share/man/man7/*.7 $(DESTDIR)$(MANDIR)/man7/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(CMDS) sp-dump)
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard share/man/man1/*.1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(wildcard share/man/man5/*.5)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(wildcard share/man/man7/*.7)))

clean:
	rm -rf $(B) $(BA) bin
