// mapFile(path): ArrayBuffer over a read-only memory map of a whole file (column files such as a domain's
// sigma.f32: the OS pages them in on demand and shares them between processes). The mapping is private
// copy-on-write, so a stray write from JS changes this process's copy only, never the file; it is unmapped
// when the ArrayBuffer is garbage-collected.
#include <fcntl.h>
#include <napi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "errors.h"

namespace paramine {

// mapFile(path, offset?, length?): a window of the file (offset a multiple of the page size; default the
// whole file). A window past kMaxWindow is refused with BAD_FILE (a 7.7 GB column used to abort the process),
// so a caller maps large files in windows; should N-API still fail, the mapping is released once and a
// BAD_FILE error thrown.
// Node's largest Buffer (buffer.constants.MAX_LENGTH, 2^32 on 64-bit Node 20). N-API makes an external
// ArrayBuffer through a Buffer, and past this size its failure path frees its finalizer record twice and aborts
// the process, whatever the caller does after: so a bigger window is refused before N-API is asked.
constexpr size_t kMaxWindow = size_t{1} << 32;

Napi::Value MapFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw MakeError(env, "BAD_INPUT", "mapFile: path must be a string");
  std::string path = info[0].As<Napi::String>().Utf8Value();
  int64_t offset = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int64Value() : 0;
  int64_t wanted = info.Length() > 2 && info[2].IsNumber() ? info[2].As<Napi::Number>().Int64Value() : -1;
  const long page = sysconf(_SC_PAGESIZE);
  if (offset < 0 || offset % page != 0) {
    throw MakeError(env, "BAD_INPUT", "mapFile: offset must be a non-negative multiple of the page size");
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw MakeError(env, errno == ENOENT ? "FILE_NOT_FOUND" : "BAD_FILE", path + ": " + std::strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    throw MakeError(env, "BAD_FILE", path + ": " + std::strerror(err));
  }
  int64_t available = std::max<int64_t>(0, static_cast<int64_t>(st.st_size) - offset);
  size_t size = static_cast<size_t>(wanted < 0 ? available : std::min(wanted, available));
  if (size == 0) {
    close(fd);
    return Napi::ArrayBuffer::New(env, 0);
  }
  if (size > kMaxWindow) {
    close(fd);
    throw MakeError(env, "BAD_FILE",
                    path + ": a window of " + std::to_string(size) + " bytes is over the " +
                        std::to_string(kMaxWindow) + " one ArrayBuffer may hold; map it in smaller windows");
  }
  void* addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, static_cast<off_t>(offset));
  int err = errno;
  close(fd);  // the mapping keeps the file referenced
  if (addr == MAP_FAILED) throw MakeError(env, "BAD_FILE", path + ": mmap: " + std::strerror(err));
  madvise(addr, size, MADV_RANDOM);
  size_t* len = new size_t(size);
  napi_value buffer;
  napi_status status = napi_create_external_arraybuffer(
      env, addr, size, [](napi_env, void* data, void* hint) {
        size_t* n = static_cast<size_t*>(hint);
        munmap(data, *n);
        delete n;
      },
      len, &buffer);
  if (status != napi_ok) {
    munmap(addr, size);
    delete len;
    // A pending exception (V8's RangeError) would mask ours.
    bool pending = false;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
      napi_value ignored;
      napi_get_and_clear_last_exception(env, &ignored);
    }
    throw MakeError(env, "BAD_FILE",
                    path + ": a window of " + std::to_string(size) + " bytes is over this runtime's ArrayBuffer limit; map it in smaller windows");
  }
  return Napi::Value(env, buffer);
}

// dropMappedPages(path): this process's mappings of the file at `path` (another library's, such as LMDB's
// map of a store) let go of their pages with MADV_DONTNEED, so pages read once stop counting in the resident
// set; the next read faults them in again from the page cache. Shared and read-only mappings only: a private
// written page would lose its writes. Returns the bytes of the mappings advised (0 where /proc/self/maps is
// not there: other systems keep their pages).
Napi::Value DropMappedPages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw MakeError(env, "BAD_INPUT", "dropMappedPages: path must be a string");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return Napi::Number::New(env, 0);
  const std::string want(resolved);
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return Napi::Number::New(env, 0);
  double advised = 0;
  char line[PATH_MAX + 256];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long start = 0, end = 0;
    char perms[8] = {0};
    int at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &at) < 3 || at == 0) continue;
    std::string name(line + at);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    if (name != want) continue;
    if (perms[1] == 'w' && perms[3] == 'p') continue;
    if (madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED) == 0) advised += double(end - start);
  }
  std::fclose(maps);
  return Napi::Number::New(env, advised);
}

}  // namespace paramine
