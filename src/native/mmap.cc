// mapFile(path): ArrayBuffer over a read-only memory map of a whole file (column files such as a domain's
// sigma.f32: the OS pages them in on demand and shares them between processes). The mapping is private
// copy-on-write, so a stray write from JS changes this process's copy only, never the file; it is unmapped
// when the ArrayBuffer is garbage-collected.
#include <fcntl.h>
#include <napi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "errors.h"

namespace paramine {

Napi::Value MapFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw MakeError(env, "BAD_INPUT", "mapFile: path must be a string");
  std::string path = info[0].As<Napi::String>().Utf8Value();
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
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return Napi::ArrayBuffer::New(env, 0);
  }
  void* addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  int err = errno;
  close(fd);  // the mapping keeps the file referenced
  if (addr == MAP_FAILED) throw MakeError(env, "BAD_FILE", path + ": mmap: " + std::strerror(err));
  madvise(addr, size, MADV_RANDOM);
  return Napi::ArrayBuffer::New(
      env, addr, size, [](Napi::Env, void* data, size_t* len) { munmap(data, *len); delete len; }, new size_t(size));
}

}  // namespace paramine
