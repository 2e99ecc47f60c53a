// The Verilated CoherenceMonitor as a shared library, driven from Python (cohtb/monitor/rtl.py) through a
// C interface: event records go in one per clock, the CSR space is read and written over the AXI4-Lite
// port as software on an FPGA would. The record layout comes from the contract (cohtb_contract.h); the
// register addresses stay on the Python side, which reads them from the emitted monitor.json.
#include <cstdint>
#include <cstring>
#include <new>

#include "VCoherenceMonitor.h"
#include "VCoherenceMonitor___024root.h"
#include "cohtb_contract.h"
#include "verilated.h"

// The model's scheduler, which VCoherenceMonitor::eval() wraps. eval() also takes two mutexes per call (the
// deferred-delete list and the message queue of multi-threaded models); this model has neither deferred
// objects nor $display, and that bookkeeping cost about 250 instructions per event, close to a tenth of
// the whole (callgrind). A Verilator that renames this function fails the build here, not silently.
void VCoherenceMonitor___024root___eval(VCoherenceMonitor___024root* vlSelf);

namespace {

// How many clocks a handshake or a drain may take before the monitor is called stuck.
constexpr int kPatience = 1 << 20;

class Monitor {
 public:
  Monitor() : ctx_(new VerilatedContext), m_(new VCoherenceMonitor(ctx_)) {
    m_->clock = 0;
    m_->reset = 1;
    m_->event_valid = 0;
    m_->s_axil_awvalid = m_->s_axil_wvalid = m_->s_axil_arvalid = 0;
    m_->s_axil_bready = m_->s_axil_rready = 1;
    m_->eval();  // the first eval() runs the model's initial blocks and settles it
    for (int i = 0; i < 4; i++) cycle();
    m_->reset = 0;
  }
  ~Monitor() {
    m_->final();
    delete m_;
    delete ctx_;
  }

  // One clock: inputs were set while the clock is low; the rising edge samples them.
  inline void cycle() {
    m_->clock = 1;
    eval();
    m_->clock = 0;
    eval();
    cycles_++;
  }
  inline void eval() { VCoherenceMonitor___024root___eval(m_->rootp); }

  bool drain() {
    for (int i = 0; i < kPatience; i++) {
      if (!m_->busy) return true;
      cycle();
    }
    return false;
  }

  // Streams records back to back, waiting while the monitor is not ready (flow mode).
  bool stream(const cohtb_record* recs, uint64_t n) {
    VCoherenceMonitor* m = m_;
    m->event_valid = 1;
    for (uint64_t i = 0; i < n; i++) {
      const cohtb_record& r = recs[i];
      m->event_bits_line = r.line;
      m->event_bits_core = r.core;
      m->event_bits_socket = r.socket;
      m->event_bits_kind = r.kind;
      // ready depends on registers only (tap || !stall), so the last cycle's eval already settled it.
      for (int wait = 0; !m->event_ready; wait++) {
        if (wait == kPatience) return false;
        cycle();
      }
      cycle();
    }
    m->event_valid = 0;
    eval();
    return true;
  }

  // 0: OKAY, 1: SLVERR, 2: no handshake.
  int write(uint32_t addr, uint32_t data) {
    m_->s_axil_awaddr = addr;
    m_->s_axil_wdata = data;
    m_->s_axil_wstrb = 0xf;
    m_->s_axil_awvalid = m_->s_axil_wvalid = 1;
    eval();
    if (!wait_for([&] { return m_->s_axil_awready && m_->s_axil_wready; })) return 2;
    cycle();
    m_->s_axil_awvalid = m_->s_axil_wvalid = 0;
    eval();
    if (!wait_for([&] { return bool(m_->s_axil_bvalid); })) return 2;
    int resp = m_->s_axil_bresp != 0;
    cycle();
    return resp;
  }

  int read(uint32_t addr, uint32_t* data) {
    m_->s_axil_araddr = addr;
    m_->s_axil_arvalid = 1;
    eval();
    if (!wait_for([&] { return bool(m_->s_axil_arready); })) return 2;
    cycle();
    m_->s_axil_arvalid = 0;
    eval();
    if (!wait_for([&] { return bool(m_->s_axil_rvalid); })) return 2;
    *data = m_->s_axil_rdata;
    int resp = m_->s_axil_rresp != 0;
    cycle();
    return resp;
  }

  uint64_t cycles() const { return cycles_; }

 private:
  template <typename F>
  bool wait_for(F ready) {
    for (int i = 0; i < kPatience; i++) {
      if (ready()) return true;
      cycle();
    }
    return false;
  }

  VerilatedContext* ctx_;
  VCoherenceMonitor* m_;
  uint64_t cycles_ = 0;
};

}  // namespace

extern "C" {
Monitor* cohtb_monitor_new() { return new (std::nothrow) Monitor(); }
void cohtb_monitor_free(Monitor* m) { delete m; }
int cohtb_monitor_write(Monitor* m, uint32_t addr, uint32_t data) { return m->write(addr, data); }
int cohtb_monitor_read(Monitor* m, uint32_t addr, uint32_t* data) { return m->read(addr, data); }
int cohtb_monitor_stream(Monitor* m, const cohtb_record* recs, uint64_t n) { return m->stream(recs, n) ? 0 : 2; }
int cohtb_monitor_drain(Monitor* m) { return m->drain() ? 0 : 2; }
uint64_t cohtb_monitor_cycles(const Monitor* m) { return m->cycles(); }
uint32_t cohtb_record_size() { return sizeof(cohtb_record); }
}
