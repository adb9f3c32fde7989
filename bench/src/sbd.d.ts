// sbd 1.0.19 ships no types: the one function the splitting benchmark calls.
declare module 'sbd' {
  const sbd: { sentences(text: string, options?: { newline_boundaries?: boolean }): string[] };
  export default sbd;
}
