/** The `limit` most frequent words, most frequent first (ties in first-seen order). */
export function topWords(words: string[], limit: number): Array<{ word: string; count: number }> {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return [...counts]
    .map(([word, count]) => ({ word, count }))
    .sort((a, b) => b.count - a.count)
    .slice(0, Math.max(0, limit));
}
