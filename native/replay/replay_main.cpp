// cohtb-replay: streams a cohtb event file through the Verilated CoherenceMonitor, one event per clock,
// configures it and reads its counters back over the AXI4-Lite port, and prints one JSON object.
//
//   cohtb-replay EVENTS [--region R:BASE:MASK]... [--read-list FILE] [--repeat N] [--tap]
//
// BASE and MASK are line addresses (hex or decimal). --read-list names a file of CSR word addresses
// (one per line) to read after the snapshot; their values come back under "words".
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "VCoherenceMonitor.h"
#include "VCoherenceMonitor___024root.h"
#include "verilated.h"

// The model's scheduler, which VCoherenceMonitor::eval() wraps. eval() also takes two mutexes per call (the
// deferred-delete list and the message queue of multi-threaded models); this model has neither deferred
// objects nor $display, and that bookkeeping cost about 250 instructions per event, close to a tenth of
// the whole (callgrind). A Verilator that renames this function fails the build here, not silently.
void VCoherenceMonitor___024root___eval(VCoherenceMonitor___024root* vlSelf);

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "cohtb-replay: %s\n", msg.c_str());
  std::exit(2);
}

#pragma pack(push, 1)
struct FileHeader {
  char magic[8];
  uint16_t version, header_len, line_size, num_cores, num_sockets, record_size;
  uint32_t reserved;
  uint64_t num_records;
  uint32_t source_len;
};
struct Record {
  uint64_t tick, line;
  uint16_t core;
  uint8_t socket, kind;
  uint32_t aux;
};
#pragma pack(pop)
static_assert(sizeof(Record) == 24, "record layout");

// CSR addresses the harness itself needs (RegisterMap.scala).
constexpr uint32_t kCtrl = 0x40, kCmd = 0x44, kStatus = 0x48, kRegionEnable = 0x4c;
constexpr uint32_t kRegionBase0 = 0x400;

class Monitor {
 public:
  explicit Monitor(VerilatedContext* ctx) : m_(new VCoherenceMonitor(ctx)) {
    m_->clock = 0;
    m_->reset = 1;
    m_->event_valid = 0;
    m_->s_axil_awvalid = m_->s_axil_wvalid = m_->s_axil_arvalid = 0;
    m_->s_axil_bready = m_->s_axil_rready = 1;
    m_->eval();  // the first eval() runs the model's initial blocks and settles it
    for (int i = 0; i < 4; i++) cycle();
    m_->reset = 0;
    drain();
  }
  ~Monitor() { m_->final(); delete m_; }

  // One clock: inputs were set while the clock is low; the rising edge samples them.
  inline void cycle() {
    m_->clock = 1;
    eval();
    m_->clock = 0;
    eval();
    cycles_++;
  }
  inline void eval() { VCoherenceMonitor___024root___eval(m_->rootp); }

  void drain() {
    for (int i = 0; i < 1 << 20; i++) {
      if (!m_->busy) return;
      cycle();
    }
    die("monitor stayed busy");
  }

  // Streams records back to back; returns how many clock cycles it took.
  void stream(const Record* recs, uint64_t n) {
    VCoherenceMonitor* m = m_;
    m->event_valid = 1;
    for (uint64_t i = 0; i < n; i++) {
      const Record& r = recs[i];
      m->event_bits_line = r.line;
      m->event_bits_core = r.core;
      m->event_bits_socket = r.socket;
      m->event_bits_kind = r.kind;
      // ready depends on registers only (tap || !stall), so the last cycle's eval already settled it.
      while (!m->event_ready) cycle();
      cycle();
    }
    m->event_valid = 0;
    eval();
  }

  void write(uint32_t addr, uint32_t data) {
    m_->s_axil_awaddr = addr;
    m_->s_axil_wdata = data;
    m_->s_axil_wstrb = 0xf;
    m_->s_axil_awvalid = m_->s_axil_wvalid = 1;
    eval();
    while (!(m_->s_axil_awready && m_->s_axil_wready)) cycle();
    cycle();
    m_->s_axil_awvalid = m_->s_axil_wvalid = 0;
    eval();
    while (!m_->s_axil_bvalid) cycle();
    if (m_->s_axil_bresp != 0) die("CSR write " + hex(addr) + " answered SLVERR");
    cycle();
  }

  uint32_t read(uint32_t addr) {
    m_->s_axil_araddr = addr;
    m_->s_axil_arvalid = 1;
    eval();
    while (!m_->s_axil_arready) cycle();
    cycle();
    m_->s_axil_arvalid = 0;
    eval();
    while (!m_->s_axil_rvalid) cycle();
    uint32_t data = m_->s_axil_rdata;
    if (m_->s_axil_rresp != 0) die("CSR read " + hex(addr) + " answered SLVERR");
    cycle();
    return data;
  }

  uint64_t cycles() const { return cycles_; }
  static std::string hex(uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "%#llx", (unsigned long long)v);
    return b;
  }

 private:
  VCoherenceMonitor* m_;
  uint64_t cycles_ = 0;
};

uint64_t parse_u64(const std::string& s, const char* what) {
  errno = 0;
  char* end = nullptr;
  uint64_t v = std::strtoull(s.c_str(), &end, 0);
  if (errno || end == s.c_str() || *end) die(std::string("bad ") + what + ": '" + s + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("usage: cohtb-replay EVENTS [--region R:BASE:MASK]... [--read-list FILE] [--repeat N] [--tap]");
  std::string events_path = argv[1];
  struct Region { uint32_t index; uint64_t base, mask; };
  std::vector<Region> regions;
  std::vector<uint32_t> reads;
  uint64_t repeat = 1;
  bool tap = false;
  for (int i = 2; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { if (i + 1 >= argc) die("missing value after " + a); return argv[++i]; };
    if (a == "--region") {
      std::string v = next();
      size_t c1 = v.find(':'), c2 = v.find(':', c1 + 1);
      if (c1 == std::string::npos || c2 == std::string::npos) die("--region wants R:BASE:MASK, got '" + v + "'");
      regions.push_back({(uint32_t)parse_u64(v.substr(0, c1), "region index"), parse_u64(v.substr(c1 + 1, c2 - c1 - 1), "region base"),
                         parse_u64(v.substr(c2 + 1), "region mask")});
    } else if (a == "--read-list") {
      std::string path = next();
      FILE* f = std::fopen(path.c_str(), "r");
      if (!f) die(path + ": " + std::strerror(errno));
      char line[64];
      while (std::fgets(line, sizeof line, f)) {
        std::string s(line);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
        if (!s.empty()) reads.push_back((uint32_t)parse_u64(s, "CSR address"));
      }
      std::fclose(f);
    } else if (a == "--repeat") {
      repeat = parse_u64(next(), "repeat");
    } else if (a == "--tap") {
      tap = true;
    } else {
      die("unknown argument '" + a + "'");
    }
  }

  int fd = open(events_path.c_str(), O_RDONLY);
  if (fd < 0) die(events_path + ": " + std::strerror(errno));
  struct stat st;
  fstat(fd, &st);
  if ((size_t)st.st_size < sizeof(FileHeader)) die(events_path + ": truncated header");
  void* map = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) die(events_path + ": mmap failed");
  const FileHeader* h = static_cast<const FileHeader*>(map);
  if (std::memcmp(h->magic, "COHTBEVT", 8) != 0) die(events_path + ": not a cohtb event file");
  if (h->record_size != sizeof(Record)) die(events_path + ": unexpected record size");
  if (h->header_len + h->num_records * sizeof(Record) != (uint64_t)st.st_size)
    die(events_path + ": file size does not match its header (truncated or corrupt)");
  const Record* recs = reinterpret_cast<const Record*>(static_cast<const char*>(map) + h->header_len);

  auto ctx = std::make_unique<VerilatedContext>();
  Monitor mon(ctx.get());
  mon.write(kCtrl, tap ? 3 : 1);
  uint32_t enable = 0;
  for (const Region& r : regions) {
    uint32_t a = kRegionBase0 + 16 * r.index;
    mon.write(a, (uint32_t)r.base);
    mon.write(a + 4, (uint32_t)(r.base >> 32));
    mon.write(a + 8, (uint32_t)r.mask);
    mon.write(a + 12, (uint32_t)(r.mask >> 32));
    enable |= 1u << r.index;
  }
  mon.write(kRegionEnable, enable);

  uint64_t c0 = mon.cycles();
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t k = 0; k < repeat; k++) mon.stream(recs, h->num_records);
  mon.drain();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t stream_cycles = mon.cycles() - c0;

  mon.write(kCmd, 1);  // snapshot
  uint32_t status = mon.read(kStatus);
  std::printf("{\"events\": %llu, \"cycles\": %llu, \"seconds\": %.6f, \"eventsPerSecond\": %.1f, \"status\": %u, \"words\": {",
              (unsigned long long)(h->num_records * repeat), (unsigned long long)stream_cycles, seconds,
              seconds > 0 ? h->num_records * repeat / seconds : 0.0, status);
  for (size_t i = 0; i < reads.size(); i++)
    std::printf("%s\"%u\": %u", i ? ", " : "", reads[i], mon.read(reads[i]));
  std::printf("}}\n");
  munmap(map, st.st_size);
  close(fd);
  return 0;
}
