# lruvec — build, test and benchmark. Everything is built under build/.
#
#   make              build/liblruvec.a, build/liblruvec.so, build/lvbench (release)
#   make check        unit tests, short torture runs of every lock design, spin models, and an
#                     installation into build/install-test with the examples built against it
#                     (TAP/prove)
#   make bench        the main benchmark job (lvbench compare readtwice, built-in defaults)
#   make tsan | asan  the torture and unit tests under ThreadSanitizer / AddressSanitizer
#   make torture DURATION=seconds [SEED=n]   a long torture run of every design (debug build)
#   make fuzz [FUZZ_SECONDS=n]  libFuzzer (clang) on the API's call sequences (tests/fuzz)
#   make fuzz-race [FUZZ_SECONDS=n]  the same with two threads racing each step's calls
#   make soak DURATION=seconds   torture runs of every configuration and variant (debug, tsan,
#                     asan) round-robin with fresh seeds, until the first failure
#   make examples     build/examples/*: the programs of examples/, linked with build/liblruvec.a
#   make install [PREFIX=/usr/local] [LIBDIR=PREFIX/lib] [DESTDIR=]
#                     lruvec.h, liblruvec.a, liblruvec.so.MAJOR.MINOR and its two symlinks,
#                     lruvec.pc (pkg-config), lvbench and its man page lvbench.1
#   make uninstall    remove exactly those files (same PREFIX, LIBDIR and DESTDIR)

CC       ?= cc
OBJCOPY  ?= objcopy
BUILD    ?= build
DURATION ?= 60
SEED     ?= 1
PROVE    ?= prove
FUZZ_CC  ?= clang
FUZZ_SECONDS ?= 60

URCU_CFLAGS := $(shell pkg-config --cflags liburcu-bp 2>/dev/null)
URCU_LIBS   := $(shell pkg-config --libs liburcu-bp 2>/dev/null || echo -lurcu-bp -lurcu-common)

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
BASE     := -std=gnu11 -pthread -Iinclude -Isrc $(URCU_CFLAGS) $(WARN)
CFLAGS_release := -O2 -g -fPIC
CFLAGS_debug   := -O1 -g -DLV_DEBUG -fno-omit-frame-pointer
CFLAGS_tsan    := -O1 -g -DLV_DEBUG -DLV_TSAN -fsanitize=thread
CFLAGS_asan    := -O1 -g -DLV_DEBUG -DLV_ASAN -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDLIBS   := $(URCU_LIBS) -lm -pthread
# test_filemap slows the library's fills down by wrapping pread(2); test_readahead fails
# and holds them the same way
LDFLAGS_test_filemap := -Wl,--wrap=pread
LDFLAGS_test_readahead := -Wl,--wrap=pread
LDFLAGS_test_memory := -Wl,--wrap=free_folios -Wl,--wrap=malloc -Wl,--wrap=calloc \
	-Wl,--wrap=realloc -Wl,--wrap=free
# test_swapfile fails swapon's allocations one at a time and looks for what was kept
LDFLAGS_test_swapfile := -Wl,--wrap=calloc -Wl,--wrap=aligned_alloc -Wl,--wrap=mmap \
	-Wl,--wrap=free -Wl,--wrap=munmap

# Installation directories (GNU names; DESTDIR is prepended to each when installing).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
INSTALL    ?= install

# The version is defined once, in the public header; the shared library's names follow it.
LV_MAJOR := $(shell awk '$$2 == "LV_VERSION_MAJOR" { print $$3 }' include/lruvec.h)
LV_MINOR := $(shell awk '$$2 == "LV_VERSION_MINOR" { print $$3 }' include/lruvec.h)
ifeq ($(LV_MAJOR)$(LV_MINOR),)
$(error cannot read LV_VERSION_MAJOR and LV_VERSION_MINOR from include/lruvec.h)
endif
VERSION := $(LV_MAJOR).$(LV_MINOR)
SONAME  := liblruvec.so.$(LV_MAJOR)
SOFILE  := liblruvec.so.$(VERSION)

LIB_SRCS   := $(wildcard src/*.c)
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
BENCH_SRCS := $(wildcard tools/lvbench/*.c)
EXAMPLE_SRCS := $(wildcard examples/*.c)
HDRS       := $(wildcard include/*.h src/*.h tests/*.h tests/unit/*.h tools/lvbench/*.h)

.PHONY: all check bench tsan asan torture soak fuzz fuzz-race deps clean format examples install uninstall
all: $(BUILD)/liblruvec.a $(BUILD)/liblruvec.so $(BUILD)/lvbench

# One object tree per variant: $(BUILD)/<variant>/src/x.o
define variant
$(BUILD)/$(1)/%.o: %.c $(HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASE) $$(CFLAGS_$(1)) -c $$< -o $$@
$(BUILD)/$(1)/liblruvec.a: $(LIB_SRCS:%.c=$(BUILD)/$(1)/%.o)
	@rm -f $$@
	ar rcs $$@ $$^
$(BUILD)/$(1)/tests/%: $(BUILD)/$(1)/tests/unit/%.o $(BUILD)/$(1)/liblruvec.a
	$$(CC) $$(CFLAGS_$(1)) -pthread $$^ -o $$@ $$(LDFLAGS_$$*) $$(LDLIBS)
$(BUILD)/$(1)/torture: $(BUILD)/$(1)/tests/stress/torture.o $(BUILD)/$(1)/liblruvec.a
	$$(CC) $$(CFLAGS_$(1)) -pthread $$^ -o $$@ $$(LDLIBS)
$(BUILD)/$(1)/fuzz_replay: tests/fuzz/fuzz_ops.c $(BUILD)/$(1)/liblruvec.a $(HDRS)
	$$(CC) $$(BASE) $$(CFLAGS_$(1)) -DLV_FUZZ_REPLAY tests/fuzz/fuzz_ops.c \
		$(BUILD)/$(1)/liblruvec.a -o $$@ $$(LDLIBS)
$(BUILD)/$(1)/fuzz_race_replay: tests/fuzz/fuzz_race.c $(BUILD)/$(1)/liblruvec.a $(HDRS)
	$$(CC) $$(BASE) $$(CFLAGS_$(1)) -DLV_FUZZ_REPLAY tests/fuzz/fuzz_race.c \
		$(BUILD)/$(1)/liblruvec.a -o $$@ $$(LDLIBS)
endef
$(foreach v,release debug tsan asan,$(eval $(call variant,$(v))))

# The static library exports what the shared one does: its objects are linked into one
# (ld -r) whose other global symbols are made local, so that a program linked statically can
# neither call nor clash with the kernel-named internals (folio_alloc, css_get, ...). The
# variants' own archives keep them: the tests reach into the library.
$(BUILD)/exports.txt: $(BUILD)/liblruvec.so
	nm -D --defined-only $< | awk '{ sub(/@.*/, "", $$NF); print $$NF }' > $@
$(BUILD)/liblruvec.a: $(LIB_SRCS:%.c=$(BUILD)/release/%.o) $(BUILD)/exports.txt
	$(LD) -r -o $(BUILD)/release/liblruvec.o $(filter %.o,$^)
	$(OBJCOPY) --keep-global-symbols=$(BUILD)/exports.txt $(BUILD)/release/liblruvec.o
	@rm -f $@
	ar rcs $@ $(BUILD)/release/liblruvec.o
# Only the API of lruvec.h is exported (liblruvec.map); the soname carries the major version,
# and the symlink $(SONAME) lets programs linked against this build tree run from it.
$(BUILD)/liblruvec.so: $(LIB_SRCS:%.c=$(BUILD)/release/%.o) liblruvec.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=liblruvec.map -Wl,-z,defs \
		-o $@ $(filter %.o,$^) $(LDLIBS)
	ln -sf liblruvec.so $(BUILD)/$(SONAME)
$(BUILD)/lvbench: $(BENCH_SRCS:%.c=$(BUILD)/release/%.o) $(BUILD)/release/liblruvec.a
	$(CC) -O2 -pthread $^ -o $@ $(LDLIBS)
# The man page is made from lvbench's own help texts.
$(BUILD)/lvbench.1: $(BUILD)/lvbench scripts/mkman.sh
	scripts/mkman.sh $(BUILD)/lvbench $(VERSION) > $@.tmp && mv $@.tmp $@

# The examples as a reader would build them, against this tree's static library.
examples: $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)
$(BUILD)/examples/%: examples/%.c include/lruvec.h $(BUILD)/liblruvec.a
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -Iinclude $< -o $@ $(BUILD)/liblruvec.a $(LDLIBS)

UNIT_BINS = $(patsubst tests/unit/%.c,$(BUILD)/$(1)/tests/%,$(UNIT_SRCS))

deps:
	@scripts/install-deps.sh

check: deps
	@$(MAKE) --no-print-directory $(call UNIT_BINS,debug) $(BUILD)/debug/torture $(BUILD)/lvbench \
		$(BUILD)/debug/fuzz_replay $(BUILD)/debug/fuzz_race_replay $(BUILD)/liblruvec.a \
		$(BUILD)/liblruvec.so \
		$(BUILD)/lvbench.1
	BUILD=$(BUILD) CC="$(CC)" $(PROVE) -f $(call UNIT_BINS,debug) tests/stress/torture.sh \
		tests/stress/torture-v1.sh tests/fuzz/replay.sh tests/fuzz/replay-race.sh tests/fuzz/api.sh \
		tests/models/run-models.sh tests/lvbench.sh tests/install.sh \
		tests/readme.sh tests/bench-report.sh tests/replay.sh

bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/lvbench
	$(BUILD)/lvbench compare readtwice

tsan: deps
	@$(MAKE) --no-print-directory $(call UNIT_BINS,tsan) $(BUILD)/tsan/torture
	TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1" BUILD=$(BUILD) \
		VARIANT=tsan $(PROVE) -f $(call UNIT_BINS,tsan) tests/stress/torture.sh

asan: deps
	@$(MAKE) --no-print-directory $(call UNIT_BINS,asan) $(BUILD)/asan/torture \
		$(BUILD)/asan/fuzz_replay $(BUILD)/asan/fuzz_race_replay
	BUILD=$(BUILD) VARIANT=asan $(PROVE) -f $(call UNIT_BINS,asan) tests/stress/torture.sh \
		tests/fuzz/replay.sh tests/fuzz/replay-race.sh

torture: deps
	@$(MAKE) --no-print-directory $(BUILD)/debug/torture
	BUILD=$(BUILD) TORTURE_DURATION=$(DURATION) TORTURE_SEED=$(SEED) $(PROVE) -v tests/stress/torture.sh

soak: deps
	@$(MAKE) --no-print-directory $(BUILD)/debug/torture $(BUILD)/tsan/torture $(BUILD)/asan/torture
	BUILD=$(BUILD) DURATION=$(DURATION) tests/stress/soak.sh

# libFuzzer needs clang and its runtime (Debian: clang, libclang-rt-14-dev); not part of check.
# New inputs go to $(BUILD)/fuzz_ops-corpus, seeded from tests/fuzz/corpus (fuzz_race's to
# $(BUILD)/fuzz_race-corpus, from tests/fuzz/corpus-race); a crash is saved in $(BUILD)/ as
# crash-*: add it to the corpus once fixed, and check replays it.
# Edge coverage only: comparison tracing (-fsanitize-coverage=trace-cmp, on by default) took
# a third of the time in lv_check()'s walks and the harness's byte checks, and only feeds
# libFuzzer's dictionary, which picks constants the input's bytes reach by `%` anyway.
FUZZ_FLAGS := $(BASE) -O1 -g -DLV_DEBUG -DLV_ASAN -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -fno-sanitize-coverage=trace-cmp
$(BUILD)/fuzz/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
.SECONDARY: $(LIB_SRCS:%.c=$(BUILD)/fuzz/%.o)
# liburcu linked statically: from the shared library every read-side lock reached its
# thread-local state through __tls_get_addr, which ASan intercepts, and that cost the fuzzer
# 40 % of its executions per second.
FUZZ_LIBS := $(patsubst -l%,-l:lib%.a,$(URCU_LIBS)) -lm -pthread
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRCS:%.c=$(BUILD)/fuzz/%.o) $(HDRS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(LIB_SRCS:%.c=$(BUILD)/fuzz/%.o) \
		-o $@ $(FUZZ_LIBS)

fuzz: $(BUILD)/fuzz/fuzz_ops
	tests/fuzz/run.sh $(BUILD)/fuzz/fuzz_ops $(FUZZ_SECONDS) $(BUILD)

# The two-thread harness: the same driver, its own corpus (tests/fuzz/corpus-race).
fuzz-race: $(BUILD)/fuzz/fuzz_race
	tests/fuzz/run.sh $(BUILD)/fuzz/fuzz_race $(FUZZ_SECONDS) $(BUILD)

format:
	clang-format -i include/*.h src/*.[ch] tests/unit/*.[ch] tests/stress/*.c tests/fuzz/*.c \
		tools/lvbench/*.[ch]

# lruvec.pc locates everything relative to its own directory (${pcfiledir}), so the same file
# works installed in place, staged under DESTDIR, or moved: pkg-config needs no sysroot.
PC_REL = $(shell realpath -m --relative-to=$(LIBDIR)/pkgconfig $(1))
INSTALLED = $(INCLUDEDIR)/lruvec.h $(LIBDIR)/liblruvec.a $(LIBDIR)/$(SOFILE) \
	$(LIBDIR)/$(SONAME) $(LIBDIR)/liblruvec.so $(LIBDIR)/pkgconfig/lruvec.pc \
	$(BINDIR)/lvbench $(MANDIR)/man1/lvbench.1

install: $(BUILD)/liblruvec.a $(BUILD)/liblruvec.so $(BUILD)/lvbench $(BUILD)/lvbench.1 \
		lruvec.pc.in
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 644 include/lruvec.h $(DESTDIR)$(INCLUDEDIR)/lruvec.h
	$(INSTALL) -m 644 $(BUILD)/liblruvec.a $(DESTDIR)$(LIBDIR)/liblruvec.a
	$(INSTALL) -m 755 $(BUILD)/liblruvec.so $(DESTDIR)$(LIBDIR)/$(SOFILE)
	ln -sf $(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/liblruvec.so
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@PREFIX@|$(call PC_REL,$(PREFIX))|' \
		-e 's|@LIBDIR@|$(call PC_REL,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR@|$(call PC_REL,$(INCLUDEDIR))|' lruvec.pc.in > $(BUILD)/lruvec.pc
	$(INSTALL) -m 644 $(BUILD)/lruvec.pc $(DESTDIR)$(LIBDIR)/pkgconfig/lruvec.pc
	$(INSTALL) -m 755 $(BUILD)/lvbench $(DESTDIR)$(BINDIR)/lvbench
	$(INSTALL) -m 644 $(BUILD)/lvbench.1 $(DESTDIR)$(MANDIR)/man1/lvbench.1

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

clean:
	rm -rf $(BUILD)
