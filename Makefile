# cohtb set-up, tests and the main job. `make test` and `make run` do all set-up on a fresh machine.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .stamps
TOOLS := .tools
MILL_VERSION := $(shell cat .mill-version)
MILL := $(TOOLS)/mill-$(MILL_VERSION)
APT_PACKAGES := iverilog liblz4-dev yosys maven default-jdk-headless python3-venv g++ make zlib1g-dev binutils busybox-static
# What building the full-system guest kernels needs (`make kernel`): the source and the kernel's build tools.
KERNEL_PACKAGES := linux-source-6.12 dwarves flex bison libelf-dev libssl-dev bc cpio patch
RTL_SOURCES := $(shell find rtl/src -name '*.scala') rtl/variants.txt build.sc .mill-version

.PHONY: setup test test-gem5 test-kernel kernel fpga run rtl contract workloads native clean
setup: $(STAMPS)/python rtl workloads native

test: setup
	$(VENV)/bin/pytest -q

# The gem5 integration tests alone (they need GEM5 or gem5.opt on PATH; minutes per run).
test-gem5: setup
	$(VENV)/bin/pytest -q -m "gem5 and not kernel"

# The full-system guest kernels: Debian's linux-source-6.12 and build tools, then every variant (cached; about
# 5 minutes each the first time on 2 cores).
kernel: setup $(STAMPS)/apt-kernel
	$(VENV)/bin/cohtb kernel build

# The kernel tests alone: the patches against the packaged source and a real build's DWARF (minutes).
test-kernel: setup $(STAMPS)/apt-kernel
	$(VENV)/bin/pytest -q -m kernel

# The default monitor through a real FPGA flow: Yosys synth_ecp5, nextpnr-ecp5 on an LFE5U-85F at 125 MHz, two
# seeds (about 15 minutes each on one core); fails if it misses the constraint. Reports: results/fpga/.
fpga: setup
	$(VENV)/bin/cohtb synth --target ecp5 --variant default --freq 125 --seed 1 --seed 2 \
	    --json results/fpga/ecp5-default.json --keep results/fpga/default

run: setup
	$(VENV)/bin/cohtb run

# Installs the Debian packages of $(1) that are missing (with sudo unless root), saying so as $(2).
define apt_install
	@mkdir -p $(STAMPS)
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "$(2): installing Debian packages: $$missing"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq $$missing >/dev/null; \
	fi
	@touch $@
endef

# Debian packages: Icarus Verilog (second simulator), lz4 (FST waves), Yosys (synthesis check),
# Maven + JDK (Mill and Chisel come from Maven Central), busybox-static (the full-system guest's shell).
$(STAMPS)/apt:
	$(call apt_install,$(APT_PACKAGES),setup)

$(STAMPS)/apt-kernel:
	$(call apt_install,$(KERNEL_PACKAGES),kernel)

$(STAMPS)/python: pyproject.toml $(STAMPS)/apt
	@mkdir -p $(STAMPS)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,cluster]'
	@touch $@

$(MILL): $(STAMPS)/apt
	@mkdir -p $(TOOLS)
	@# mvn prints terminal colour resets even with -B and style.color=never: its output is shown only on failure.
	@echo "setup: Mill $(MILL_VERSION) from Maven Central"
	@mvn -q -B -Dstyle.color=never dependency:copy -Dartifact=com.lihaoyi:mill-dist:$(MILL_VERSION):exe \
	    -DoutputDirectory=$(TOOLS) > $(TOOLS)/mvn.log 2>&1 || { sed 's/\x1b\[[0-9;]*m//g' $(TOOLS)/mvn.log; exit 1; }
	mv $(TOOLS)/mill-dist-$(MILL_VERSION).exe $(MILL) && chmod +x $(MILL)

# Emits every configuration of rtl/variants.txt into build/rtl/<name>/.
rtl: build/rtl/.emitted
build/rtl/.emitted: $(RTL_SOURCES) $(MILL)
	rm -rf build/rtl
	$(MILL) --no-server --ticker false rtl.run --out=build/rtl --variants=rtl/variants.txt
	@touch $@

# The contract's C header and Python constants, generated from the emitted contract.json (committed, so the
# package imports without a hardware build; tests/test_contract.py fails when they are stale).
contract: rtl $(STAMPS)/python
	$(PY) -m cohtb.contract.codegen build/rtl/contract.json

workloads: $(STAMPS)/apt
	$(MAKE) -s -C workloads

# The ingest tool, the compiled reference model, and the Verilated monitor library of the default variant
# (rebuilt when the RTL or its source changes).
native: $(STAMPS)/python rtl
	$(MAKE) -s -C native/ingest
	$(MAKE) -s -C native/model
	$(PY) -c "from cohtb.monitor import rtl; print('Verilated monitor:', rtl.build_library('default'))"

clean:
	rm -rf build out $(STAMPS) .tools
	@if [ -f workloads/Makefile ]; then $(MAKE) -s -C workloads clean; fi
