{
  "targets": [
    {
      "target_name": "paramine_faiss",
      "sources": ["addon.cc", "index_object.cc", "workers.cc", "search.cc", "merge.cc", "tree.cc", "errors.cc", "train.cc", "half_vectors.cc", "mmap.cc"],
      "include_dirs": ["<!@(node -p \"require('node-addon-api').include\")", "/usr/include"],
      "defines": ["NAPI_CPP_EXCEPTIONS", "NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      # FAISS needs RTTI (dynamic_cast on SearchParameters and index types) and C++ exceptions.
      "cflags!": ["-fno-rtti", "-fno-exceptions"],
      "cflags_cc!": ["-fno-rtti", "-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-frtti", "-fexceptions", "-fopenmp", "-O2"],
      # Debian ships FAISS as a static library only; link it whole so its registries (index IO) survive.
      "libraries": [
        "-Wl,--whole-archive /usr/lib/x86_64-linux-gnu/libfaiss.a -Wl,--no-whole-archive",
        "-lopenblas",
        "-fopenmp"
      ]
    }
  ]
}
