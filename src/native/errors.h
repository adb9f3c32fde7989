// Error codes shared with src/errors.ts (ParamineError codes): every failure leaves the addon as a JS Error
// whose `code` is one of these strings.
#pragma once

#include <napi.h>

#include <stdexcept>
#include <string>

namespace paramine {

// Thrown by our own checks; `code` is a ParamineError code.
class CodedError : public std::runtime_error {
 public:
  CodedError(std::string code, const std::string& message) : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

struct ErrorInfo {
  std::string code;
  std::string message;
};

// Classifies the exception being handled (call inside a catch block). FAISS exceptions map to
// `faissCode` (FAISS_ERROR unless the caller knows better, e.g. BAD_FILE while reading).
ErrorInfo CurrentError(const char* faissCode = "FAISS_ERROR");

Napi::Error MakeError(Napi::Env env, const std::string& code, const std::string& message);

// A promise already rejected with `code`: async methods never throw synchronously.
Napi::Value Rejected(Napi::Env env, const std::string& code, const std::string& message);

}  // namespace paramine
