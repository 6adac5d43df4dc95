# tacosc — build, test and set-up.  See README.md.
#   make            build libtacos.a, tacosc and (when an MPI compiler is found) tacos-run
#   make demo       install missing Debian packages (as root), build, compile a shipped topology
#   make check      install missing Debian packages (as root), build, run every test suite
#   make asan       the test suites under AddressSanitizer and UBSan
#   make valgrind   the test suites under valgrind memcheck
#   make bench      every benchmark (bench-synth, bench-sim, bench-exec, bench-msccl)

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
LDLIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lglpk -lm -lpthread
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
LDFLAGS  ?=

LIB_SRCS  := $(sort $(wildcard src/core/*.c src/topo/*.c src/synth/*.c src/algo/*.c src/sim/*.c \
               src/photonic/*.c src/sparse/*.c src/tune/*.c src/emit/*.c))
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

.PHONY: all deps demo check check-run asan valgrind bench bench-synth bench-sim bench-exec bench-msccl clean

all: $(TACOSC) $(EXEC_BIN)

deps:
	@sh scripts/deps.sh

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

demo: deps
	@$(MAKE) --no-print-directory all
	./tacosc topologies/mesh2d-4x4.xml --collective allreduce --size 64M -o schedules/demo-mesh4x4-allreduce.json
	./tacosc verify schedules/demo-mesh4x4-allreduce.json
	./tacosc info topologies/mesh2d-4x4.xml --size 64M

check: deps
	@$(MAKE) --no-print-directory check-run

check-run: all $(TESTS)
	@TACOSC=$(abspath $(TACOSC)) TACOSRUN=$(abspath $(TACOSRUN)) sh scripts/run-tests.sh $(TESTS)

asan:
	@sh scripts/deps.sh
	@$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" check-run

valgrind: all $(TESTS)
	@TACOSC=$(abspath $(TACOSC)) TACOSRUN=$(abspath $(TACOSRUN)) VALGRIND=1 sh scripts/run-tests.sh $(TESTS)

bench: bench-synth bench-sim bench-exec bench-msccl

bench-synth: all
	sh tests/bench/bench-synth.sh

bench-sim: all
	sh tests/bench/bench-sim.sh

bench-exec: all
	sh tests/bench/bench-exec.sh

bench-msccl: all
	sh tests/bench/bench-msccl.sh

clean:
	rm -rf build tacosc tacos-run

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
