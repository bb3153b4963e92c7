export function describePortHolder(port: number): string | undefined;
