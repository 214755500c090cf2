// File: lib/sysfs/pci.cc
// The only translation unit that includes <pci/pci.h>.
//
// libpci error handling. pci_access::error is "write error message and quit" (PCI_NONRET); the
// default implementation calls exit(1). libpci calls it from deep inside C code (sysfs_scan,
// sysfs_get_string for mandatory attributes, pci_malloc), so it cannot return an error code
// either. We install OnPciError, which formats the message into a thread-local buffer and
// longjmp()s back to the setjmp() in RunLibpci on the same thread. Rules that keep this sound:
//   * between setjmp and the libpci calls only C frames are skipped by the jump (libpci's),
//     so no C++ destructor is bypassed; everything C++ lives outside the guarded function;
//   * the guarded function's locals that change after setjmp are `volatile` or not read after
//     the jump;
//   * after a jump pci_cleanup() still frees the access and every linked device. libpci leaks
//     on two error paths: sysfs_scan (its DIR and an unlinked pci_dev when an entry name does
//     not parse) and sysfs_get_resources (a FILE on a syntax error). We check entry names
//     ourselves before libpci runs (LibpciAcceptsName) and never ask for PCI_FILL_BASES, so
//     neither path is taken; the remaining error paths (a mandatory file missing, e.g. a device
//     vanishing mid-scan) leak nothing.
#include "lib/sysfs/pci.h"

#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/sysfs/parsers.h"
#include "spdlog/spdlog.h"

extern "C" {
#include <pci/pci.h>
}

namespace neuron::sysfs {
namespace {

struct ErrorTrap {
  std::jmp_buf env;
  bool armed = false;
  char message[512] = {0};
};
thread_local ErrorTrap* t_trap = nullptr;

// GNU noreturn, part of the function type as in libpci's hook (clang checks): it aborts or
// longjmps.
extern "C" __attribute__((noreturn)) void OnPciError(char* msg, ...) {
  ErrorTrap* trap = t_trap;
  char buf[512];
  va_list ap;
  va_start(ap, msg);
  std::vsnprintf(buf, sizeof(buf), msg, ap);
  va_end(ap);
  if (trap == nullptr || !trap->armed) {
    // Not called from inside RunLibpci: there is nowhere to return to. Never exit silently.
    std::fprintf(stderr, "libpci fatal error outside a guarded call: %s\n", buf);
    std::abort();
  }
  std::memcpy(trap->message, buf, sizeof(buf));
  trap->armed = false;
  std::longjmp(trap->env, 1);
}

extern "C" void OnPciWarning(char* msg, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, msg);
  std::vsnprintf(buf, sizeof(buf), msg, ap);
  va_end(ap);
  spdlog::debug("libpci warning={}", buf);
}

extern "C" void OnPciDebug(char*, ...) {}

struct RawDevice {
  int domain, bus, dev, func;
  uint16_t vendor, device;
  uint32_t klass;  // 16-bit base+sub class from libpci; prog-if added from sysfs later
  int numa_node;
};

// Plain C-style body run under the trap: no C++ objects with destructors in this frame.
// Fills at most `cap` entries of `out`, returns how many devices matched.
int ScanWithLibpci(const char* sysfs_path, int vendor_filter, RawDevice* out, int cap,
                   ErrorTrap* trap) {
  struct pci_access* volatile acc = nullptr;
  volatile int count = 0;
  if (setjmp(trap->env) != 0) {
    if (acc != nullptr) pci_cleanup(acc);
    return -1;
  }
  trap->armed = true;
  acc = pci_alloc();
  acc->error = OnPciError;
  acc->warning = OnPciWarning;
  acc->debug = OnPciDebug;
  acc->method = PCI_ACCESS_SYS_BUS_PCI;
  char param[] = "sysfs.path";
  char value[1024];
  std::snprintf(value, sizeof(value), "%s", sysfs_path);
  pci_set_param(acc, param, value);
  pci_init(acc);
  pci_scan_bus(acc);
  for (struct pci_dev* d = acc->devices; d != nullptr; d = d->next) {
    pci_fill_info(d, PCI_FILL_IDENT | PCI_FILL_CLASS | PCI_FILL_NUMA_NODE);
    if (vendor_filter >= 0 && d->vendor_id != vendor_filter) continue;
    if (count < cap) {
      out[count] = RawDevice{d->domain,    d->bus,       d->dev,          d->func,
                             d->vendor_id, d->device_id, d->device_class, d->numa_node};
    }
    count = count + 1;
  }
  trap->armed = false;
  pci_cleanup(acc);
  return count;
}

// The same acceptance rule as libpci's sysfs_scan ("%x:%x:%x.%d", domain <= 0x7fffffff), checked
// before libpci runs: sysfs_scan reports a bad name through `error` while its opendir() is
// still open, so letting libpci find it would leak a DIR (and an fd) on every retry.
bool LibpciAcceptsName(const std::string& name) {
  if (name.empty() || name[0] == '.') return true;  // skipped by libpci
  unsigned dom = 0, bus = 0, dev = 0;
  int func = 0;
  char tail = 0;
  const int n = std::sscanf(name.c_str(), "%x:%x:%x.%d%c", &dom, &bus, &dev, &func, &tail);
  return n == 4 && dom <= 0x7fffffff;
}

}  // namespace

std::string FormatPciAddress(int domain, int bus, int slot, int func) {
  return absl::StrFormat("%04x:%02x:%02x.%x", domain, bus, slot, func);
}

absl::StatusOr<std::vector<PciDevice>> ListPciDevices(const Fs& fs, const PciFilter& filter) {
  const std::string root = fs.root();
  const std::string sysfs_path = root == "/" ? "/sys/bus/pci" : absl::StrCat(root, "/sys/bus/pci");
  if (!fs.Exists("sys/bus/pci/devices")) {
    return absl::NotFoundError(absl::StrCat("no PCI bus at ", sysfs_path, "/devices"));
  }
  if (sysfs_path.size() >= 900) return absl::InvalidArgumentError("host root path too long");
  auto names = fs.ListDir("sys/bus/pci/devices");
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (!LibpciAcceptsName(name)) {
      return absl::UnavailableError(
          absl::StrCat("unparsable PCI entry ", sysfs_path, "/devices/", name));
    }
  }

  std::vector<RawDevice> raw(64);
  int n = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    ErrorTrap trap;
    ErrorTrap* const previous = t_trap;  // nested calls are not expected, but stay correct
    t_trap = &trap;
    n = ScanWithLibpci(sysfs_path.c_str(), filter.vendor_id ? *filter.vendor_id : -1, raw.data(),
                       static_cast<int>(raw.size()), &trap);
    t_trap = previous;
    if (n < 0) {
      return absl::UnavailableError(absl::StrCat("libpci (", sysfs_path, "): ", trap.message));
    }
    if (n <= static_cast<int>(raw.size())) break;
    raw.resize(static_cast<size_t>(n) + 16);  // the bus grew between passes: scan again
  }
  if (n > static_cast<int>(raw.size())) return absl::UnavailableError("PCI bus keeps changing");

  std::vector<PciDevice> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const RawDevice& r = raw[static_cast<size_t>(i)];
    PciDevice d;
    d.address = FormatPciAddress(r.domain, r.bus, r.dev, r.func);
    d.vendor_id = r.vendor;
    d.device_id = r.device;
    d.class_code = r.klass << 8;
    d.numa_node = r.numa_node;
    const std::string dir = absl::StrCat("sys/bus/pci/devices/", d.address);
    // libpci keeps only the 16-bit class; the sysfs file has the prog-if too.
    if (auto text = fs.ReadFile(dir + "/class"); text.ok()) {
      if (auto v = ParseHexU32(*text); v.ok() && (*v >> 8) == r.klass) d.class_code = *v;
    }
    if (auto link = fs.ReadLink(dir + "/driver"); link.ok()) {
      const size_t slash = link->rfind('/');
      d.driver = slash == std::string::npos ? *link : link->substr(slash + 1);
    }
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
  return out;
}

absl::StatusOr<std::vector<PciDevice>> ListNeuronPciDevices(const Fs& fs) {
  return ListPciDevices(fs, PciFilter{.vendor_id = 0x1d0f});
}

}  // namespace neuron::sysfs
