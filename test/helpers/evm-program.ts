/**
 * EVM bytecode for tests, written as opcode names instead of hex: `assemble([...])` turns a program into
 * bytes. A number, bigint or hex string after a PUSHn is its operand (left-padded to n bytes); `label('x')`
 * marks a JUMPDEST position (the JUMPDEST itself is written) and `at('x')` pushes that position as PUSH2.
 * `deployment(runtime, storage)` is init code that writes the storage slots and returns the runtime.
 */

const OPCODES: Readonly<Record<string, number>> = {
  STOP: 0x00,
  ADD: 0x01,
  MUL: 0x02,
  SUB: 0x03,
  LT: 0x10,
  GT: 0x11,
  EQ: 0x14,
  ISZERO: 0x15,
  SHR: 0x1c,
  BALANCE: 0x31,
  CALLER: 0x33,
  CALLDATALOAD: 0x35,
  CODECOPY: 0x39,
  BLOCKHASH: 0x40,
  COINBASE: 0x41,
  TIMESTAMP: 0x42,
  NUMBER: 0x43,
  PREVRANDAO: 0x44,
  GASLIMIT: 0x45,
  CHAINID: 0x46,
  SELFBALANCE: 0x47,
  BASEFEE: 0x48,
  LOG1: 0xa1,
  LOG2: 0xa2,
  POP: 0x50,
  MLOAD: 0x51,
  MSTORE: 0x52,
  SLOAD: 0x54,
  SSTORE: 0x55,
  JUMP: 0x56,
  JUMPI: 0x57,
  GAS: 0x5a,
  JUMPDEST: 0x5b,
  DUP1: 0x80,
  DUP2: 0x81,
  SWAP1: 0x90,
  CALL: 0xf1,
  STATICCALL: 0xfa,
  RETURN: 0xf3,
  REVERT: 0xfd,
  INVALID: 0xfe,
};

interface Label {
  readonly label: string;
}
interface Ref {
  readonly at: string;
}
export type Item = string | number | bigint | Label | Ref;

export const label = (name: string): Label => ({ label: name });
export const at = (name: string): Ref => ({ at: name });

function operand(value: number | bigint | string, size: number): number[] {
  const big = typeof value === 'string' ? BigInt(value) : BigInt(value);
  const hex = big.toString(16).padStart(size * 2, '0');
  if (hex.length > size * 2) throw new Error(`operand ${value} does not fit in ${size} bytes`);
  return [...Buffer.from(hex, 'hex')];
}

/** Size in bytes of each item, for placing labels. */
function sizeOf(item: Item, previous: Item | undefined): number {
  if (typeof item === 'object') return 'label' in item ? 1 : 3;
  if (typeof item === 'string' && item in OPCODES) return 1;
  if (typeof item === 'string' && /^PUSH\d+$/.test(item)) return 1;
  if (typeof previous === 'string' && /^PUSH\d+$/.test(previous)) return Number(previous.slice(4));
  throw new Error(`cannot assemble ${String(item)}`);
}

export function assemble(program: readonly Item[]): string {
  const positions = new Map<string, number>();
  let offset = 0;
  program.forEach((item, index) => {
    if (typeof item === 'object' && 'label' in item) positions.set(item.label, offset);
    offset += sizeOf(item, program[index - 1]);
  });
  const bytes: number[] = [];
  program.forEach((item, index) => {
    const previous = program[index - 1];
    if (typeof item === 'object') {
      if ('label' in item) bytes.push(OPCODES.JUMPDEST as number);
      else bytes.push(0x61, ...operand(positions.get(item.at) ?? Number.NaN, 2));
    } else if (typeof item === 'string' && /^PUSH\d+$/.test(item)) bytes.push(0x5f + Number(item.slice(4)));
    else if (typeof item === 'string' && item in OPCODES) bytes.push(OPCODES[item] as number);
    else if (typeof previous === 'string' && /^PUSH\d+$/.test(previous))
      bytes.push(...operand(item, Number(previous.slice(4))));
    else throw new Error(`cannot assemble ${String(item)}`);
  });
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

/** Init code writing `storage` (slot → value) and returning `runtime`. */
export function deployment(runtime: string, storage: readonly (readonly [bigint, bigint])[] = []): string {
  const code = runtime.slice(2);
  const writes = storage.flatMap(([slot, value]) => ['PUSH32', value, 'PUSH32', slot, 'SSTORE']);
  const init = assemble([
    ...writes,
    'PUSH2',
    code.length / 2,
    'DUP1',
    'PUSH2',
    0,
    'PUSH1',
    0,
    'CODECOPY',
    'PUSH1',
    0,
    'RETURN',
  ]);
  // The runtime starts right after the init code: patch the CODECOPY offset (the second PUSH2's operand).
  const length = (init.length - 2) / 2;
  const patched = assemble([
    ...writes,
    'PUSH2',
    code.length / 2,
    'DUP1',
    'PUSH2',
    length,
    'PUSH1',
    0,
    'CODECOPY',
    'PUSH1',
    0,
    'RETURN',
  ]);
  return `${patched}${code}`;
}
