export function renderHtmlReport(_p: unknown): string { return ""; }
