// The one token estimate, for when a back-end reports no usage: what the budget charges a model
// call before and after it (dispatch/budget-gate.ts, dispatch/model.ts), and when the standalone
// back-end's history is long enough to compress (backends/conversation-store.ts). One count, so a
// history the budget lets through is measured by the same rule that folds it. Pure.

// Han, kana, Hangul and fullwidth forms: about one token per character in common tokenizers.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/gu;

/** ~4 chars per token, CJK ~1 per char. */
export function estimateTokens(text: string): number {
  if (text === "") return 0;
  const cjk = text.match(CJK)?.length ?? 0;
  return cjk + Math.ceil((text.length - cjk) / 4);
}
