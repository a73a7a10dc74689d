"""Evidence judging: which paragraphs support each question part, bridge hops, and what to search next."""
