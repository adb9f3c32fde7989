#include "errors.h"

#include <faiss/impl/FaissException.h>

#include <new>

namespace paramine {

ErrorInfo CurrentError(const char* faissCode) {
  try {
    throw;
  } catch (const CodedError& e) {
    return {e.code(), e.what()};
  } catch (const faiss::FaissException& e) {
    // FAISS messages start with "Error in <function signature> at file:line: "; keep the useful tail.
    std::string msg = e.what();
    auto at = msg.find(": Error: ");
    if (at != std::string::npos) {
      msg = msg.substr(at + 9);
    } else if ((at = msg.find(".cpp:")) != std::string::npos) {
      auto colon = msg.find(": ", at);
      if (colon != std::string::npos) msg = msg.substr(colon + 2);
    }
    return {faissCode, "faiss: " + msg};
  } catch (const std::bad_alloc&) {
    return {"FAISS_ERROR", "faiss: out of memory"};
  } catch (const std::exception& e) {
    return {"FAISS_ERROR", std::string("faiss: ") + e.what()};
  } catch (...) {
    return {"INTERNAL", "unknown native exception"};
  }
}

Napi::Error MakeError(Napi::Env env, const std::string& code, const std::string& message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  return err;
}

Napi::Value Rejected(Napi::Env env, const std::string& code, const std::string& message) {
  auto deferred = Napi::Promise::Deferred::New(env);
  deferred.Reject(MakeError(env, code, message).Value());
  return deferred.Promise();
}

}  // namespace paramine
