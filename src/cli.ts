export async function main(argv: string[]): Promise<number> {
  console.log("acp-group", argv.join(" "));
  return 0;
}
