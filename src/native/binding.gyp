{
  "variables": {
    "faiss_archive": "/usr/lib/x86_64-linux-gnu/libfaiss.a",
    # The archive with FAISS's scalar float kernels made weak, so distance_kernels.cc's SIMD ones replace them.
    "faiss_weak": "<(module_root_dir)/build/libfaiss-weak-kernels.a"
  },
  "targets": [
    {
      "target_name": "faiss_weak_kernels",
      "type": "none",
      "actions": [
        {
          "action_name": "weaken_faiss_kernels",
          "inputs": ["<(faiss_archive)"],
          "outputs": ["<(faiss_weak)"],
          "action": [
            "objcopy",
            "-W", "_ZN5faiss18fvec_inner_productEPKfS1_m",
            "-W", "_ZN5faiss10fvec_L2sqrEPKfS1_m",
            "-W", "_ZN5faiss15fvec_norm_L2sqrEPKfm",
            "-W", "_ZN5faiss22fvec_inner_products_nyEPfPKfS2_mm",
            "-W", "_ZN5faiss13fvec_L2sqr_nyEPfPKfS2_mm",
            "-W", "_ZN5faiss21fvec_L2sqr_ny_nearestEPfPKfS2_mm",
            "<(faiss_archive)",
            "<(faiss_weak)"
          ]
        }
      ]
    },
    {
      "target_name": "paramine_faiss",
      "dependencies": ["faiss_weak_kernels"],
      "sources": ["addon.cc", "index_object.cc", "workers.cc", "remove.cc", "search.cc", "merge.cc", "tree.cc", "errors.cc", "train.cc", "half_vectors.cc", "mmap.cc", "distance_kernels.cc", "gram_scorer.cc"],
      "include_dirs": ["<!@(node -p \"require('node-addon-api').include\")", "/usr/include"],
      "defines": ["NAPI_CPP_EXCEPTIONS", "NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      # FAISS needs RTTI (dynamic_cast on SearchParameters and index types) and C++ exceptions.
      "cflags!": ["-fno-rtti", "-fno-exceptions"],
      "cflags_cc!": ["-fno-rtti", "-fno-exceptions"],
      # No fused multiply-adds where the source has none: gram_scorer.cc's sums are the JavaScript's, bit for bit.
      "cflags_cc": ["-std=c++17", "-frtti", "-fexceptions", "-fopenmp", "-O2", "-ffp-contract=off"],
      # Debian ships FAISS as a static library only; link it whole so its registries (index IO) survive.
      "libraries": [
        "-Wl,--whole-archive <(faiss_weak) -Wl,--no-whole-archive",
        "-lopenblas",
        "-fopenmp"
      ]
    }
  ]
}
