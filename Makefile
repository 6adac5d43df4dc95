# tacosc — build, test and set-up.  See README.md.
#   make            build libtacos.a, tacosc and (when an MPI compiler is found) tacos-run; missing Debian
#                   packages are named (scripts/deps.sh --check) instead of failing in the compiler
#   make deps       install the missing packages of the build and the tests (as root)
#   make demo       install missing Debian packages (as root), build, compile a shipped topology
#   make check      install missing Debian packages (as root), build, run every test suite (one line each)
#   make asan       the test suites under AddressSanitizer and UBSan
#   make valgrind   the test suites under valgrind memcheck
#   make fuzz       the libFuzzer harnesses (tests/fuzz/), FUZZ_S seconds each (default 60); needs clang
#   make bench      every benchmark (bench-synth, bench-sim, bench-compare, bench-exec, bench-photonic, bench-msccl,
#                   bench-tune, bench-sparse, bench-mscclpp: issue 28's MSCCL++ plans replayed on 8-64 ranks)
#   make matrix     issue 21's compile matrix on every shipped topology (tests/bench/matrix.sh; long)
#   make photonic-paper  the photonic paper's setup (examples/photonic/): a table and SVG breakdowns
#   make sparse-paper    the SpCCL paper's setting priced by the sparse pass beside its speedups (examples/sparse/)
#   make install    tacosc, tacos-run and the man pages under $(DESTDIR)$(PREFIX) (default /usr/local)
#   make uninstall  remove what make install put there

BUILD    ?= build
CC       ?= cc
MPICC    ?= $(shell command -v mpicc 2>/dev/null)
NVCC     ?= $(shell command -v nvcc 2>/dev/null)
PKGS     := libxml-2.0 libcjson igraph
OPT      ?= -O2
SAN      ?=
CFLAGS   ?= $(OPT) -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Iinclude -pthread $(SAN) \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CFLAGS)
LDLIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lglpk -lsvm -lm -lpthread
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
LDFLAGS  ?=

LIB_SRCS  := $(sort $(wildcard src/core/*.c src/topo/*.c src/synth/*.c src/algo/*.c src/sim/*.c \
               src/photonic/*.c src/sparse/*.c src/tune/*.c src/emit/*.c src/msccl/*.c src/mscclpp/*.c \
               src/compile/*.c))
CLI_SRCS  := $(sort $(wildcard src/cli/*.c))
EXEC_SRCS := $(sort $(wildcard src/exec/*.c))
TEST_SRCS := $(sort $(wildcard tests/check_*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TESTS     := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
LIB       := $(BUILD)/libtacos.a
TACOSC    := $(if $(filter build,$(BUILD)),tacosc,$(BUILD)/tacosc)
TACOSRUN  := $(if $(filter build,$(BUILD)),tacos-run,$(BUILD)/tacos-run)
EXEC_BIN  := $(if $(MPICC),$(TACOSRUN))

PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR   := $(PREFIX)/bin
MANDIR   := $(PREFIX)/share/man
MAN_PAGES := $(sort $(wildcard man/man[1-9]/*.[1-9]))

FUZZ_CC  ?= clang
FUZZ_S   ?= 60
FUZZ_NAMES := topo costs json msccl tune sparse svm photonic bundle import mscclpp
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

.PHONY: all deps demo check check-run asan valgrind fuzz fuzz-build bench bench-synth bench-sim bench-compare bench-exec bench-mscclpp \
        bench-photonic bench-msccl bench-tune bench-sparse matrix photonic-paper sparse-paper install uninstall clean

all: $(TACOSC) $(EXEC_BIN)

deps:
	@sh scripts/deps.sh build test

# Missing packages are named before the first compile (once per build folder), not found by the compiler.
$(BUILD)/.deps-build: scripts/deps.sh
	@mkdir -p $(dir $@)
	@sh scripts/deps.sh --check build && touch $@
$(BUILD)/.deps-test: scripts/deps.sh
	@mkdir -p $(dir $@)
	@sh scripts/deps.sh --check test && touch $@
$(LIB_OBJS) $(CLI_OBJS): | $(BUILD)/.deps-build
$(TESTS): | $(BUILD)/.deps-test

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# the topology schema is embedded into schema.o with .incbin
$(BUILD)/src/topo/schema.o: src/topo/topology.xsd

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(TACOSC): $(CLI_OBJS) $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

$(TACOSRUN): $(EXEC_SRCS) $(wildcard src/exec/*.h src/exec/*.cu) scripts/build-exec.sh $(LIB)
	@mkdir -p $(BUILD)/exec
	sh scripts/build-exec.sh "$(BUILD)" "$@" "$(MPICC)" "$(NVCC)" "$(ALL_CFLAGS)" "$(LIB) $(LDLIBS) $(LDFLAGS)"

$(BUILD)/tests/%: tests/%.c tests/testutil.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(LIB) $(CHECK_LIBS) $(LDLIBS)

# the fuzz harnesses also run inside make check: corpus replay and the boundary sweep (tests/check_fuzz.c)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
$(BUILD)/tests/check_fuzz: tests/check_fuzz.c $(FUZZ_SRCS) $(wildcard tests/fuzz/*.h) tests/testutil.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests $(LDFLAGS) -o $@ tests/check_fuzz.c $(FUZZ_SRCS) $(LIB) $(CHECK_LIBS) $(LDLIBS)

# make fuzz: the library with coverage for libFuzzer and the sanitizers, one program per harness
fuzz:
	@sh scripts/deps.sh build fuzz
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) OPT=-O1 \
	    SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" fuzz-build
	@sh scripts/fuzz.sh build/fuzz $(FUZZ_S) $(FUZZ_NAMES)

fuzz-build: $(FUZZ_NAMES:%=$(BUILD)/fuzz_%)

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/entry.c $(wildcard tests/fuzz/*.h) $(LIB)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -DTC_FUZZ_TARGET=tc_fuzz_$* $(LDFLAGS) -o $@ tests/fuzz/entry.c $< \
	    $(LIB) $(LDLIBS)

demo:
	@sh scripts/deps.sh build
	@$(MAKE) --no-print-directory all
	./tacosc topologies/mesh2d-4x4.xml --collective allreduce --size 64M -o schedules/demo-mesh4x4-allreduce.json
	./tacosc verify schedules/demo-mesh4x4-allreduce.json
	./tacosc info topologies/mesh2d-4x4.xml --size 64M

check: deps
	@$(MAKE) --no-print-directory check-run

check-run: all $(TESTS)
	@sh scripts/check-layout.sh $(BUILD)
	@TACOSC=$(abspath $(TACOSC)) TACOSRUN=$(abspath $(TACOSRUN)) sh scripts/run-tests.sh $(TESTS)

asan:
	@sh scripts/deps.sh
	@$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" check-run

valgrind: all $(TESTS)
	@TACOSC=$(abspath $(TACOSC)) TACOSRUN=$(abspath $(TACOSRUN)) VALGRIND=1 sh scripts/run-tests.sh $(TESTS)

bench: bench-synth bench-sim bench-compare bench-exec bench-photonic bench-msccl bench-tune bench-sparse bench-mscclpp

bench-synth: all
	sh tests/bench/bench-synth.sh

bench-sim: all
	sh tests/bench/bench-sim.sh

bench-compare: all
	sh tests/bench/bench-compare.sh

bench-exec: all
	sh tests/bench/bench-exec.sh

bench-msccl: all
	sh tests/bench/bench-msccl.sh

bench-mscclpp: all
	sh tests/bench/bench-mscclpp.sh

bench-photonic: all
	sh tests/bench/bench-photonic.sh

bench-tune: all
	sh tests/bench/bench-tune.sh

bench-sparse: all
	sh tests/bench/bench-sparse.sh

matrix: all
	sh tests/bench/matrix.sh

photonic-paper: all
	sh examples/photonic/paper.sh

sparse-paper: all
	sh examples/sparse/paper.sh

install: all
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(TACOSC) $(DESTDIR)$(BINDIR)/tacosc
	$(if $(EXEC_BIN),install -m 755 $(EXEC_BIN) $(DESTDIR)$(BINDIR)/tacos-run)
	@for p in $(MAN_PAGES); do \
	    d=$(DESTDIR)$(MANDIR)/$$(basename $$(dirname $$p)); \
	    echo "install -m 644 $$p $$d/"; install -d $$d && install -m 644 $$p $$d/ || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tacosc $(DESTDIR)$(BINDIR)/tacos-run
	@for p in $(MAN_PAGES); do \
	    f=$(DESTDIR)$(MANDIR)/$$(basename $$(dirname $$p))/$$(basename $$p); echo "rm -f $$f"; rm -f $$f; \
	done

clean:
	rm -rf build tacosc tacos-run

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
