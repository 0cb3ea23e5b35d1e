import type { GitConfig } from '../config/git-config.js';
import { parseBool, parseConfigInt } from '../config/git-config.js';
import { PackwrightError } from '../errors/packwright-error.js';
import { isValidFsckMessageType } from '../fsck/fsck-messages.js';
import { HiddenRefs } from '../refs/hidden-refs.js';

/** What receive.denyCurrentBranch and receive.denyDeleteCurrent say (git's enum deny_action). */
export type DenyAction = 'unconfigured' | 'ignore' | 'warn' | 'refuse' | 'updateInstead';

/** What git's receive-pack reads from the configuration (receive_pack_config). */
export interface ReceivePackConfig {
  denyDeletes: boolean;
  denyNonFastForwards: boolean;
  denyCurrentBranch: DenyAction;
  denyDeleteCurrent: DenyAction;
  /** receive.fsckObjects, else transfer.fsckObjects. */
  fsckObjects: boolean;
  /** receive.fsck.<id> and receive.fsck.skipList, in git's `--strict=` form ('' for none). */
  fsckMessageTypes: string;
  /** transfer.unpackLimit, else receive.unpackLimit, else 100. */
  unpackLimit: number;
  /** receive.maxInputSize (0: no limit). */
  maxInputSize: number;
  advertiseAtomic: boolean;
  advertisePushOptions: boolean;
  /** repack.useDeltaBaseOffset: whether ofs-delta is offered. */
  ofsDelta: boolean;
  shallowUpdate: boolean;
  /** receive.keepAlive: seconds of silence before an empty side-band packet while the push is checked (0: never). */
  keepAlive: number;
  /** receive.updateServerInfo */
  updateServerInfo: boolean;
  /** receive.autogc (default true): `git gc --auto --quiet` after a push. */
  autoGc: boolean;
  /** transfer.hideRefs and receive.hideRefs. */
  hidden: HiddenRefs;
  /** receive.procReceiveRefs: set means git would run a proc-receive hook, which packwright does not. */
  procReceiveRefs: string[];
  /** What git warns of while reading it (an unknown receive.fsck.<id>), in git's words. */
  warnings: string[];
}

function parseDeny(key: string, value: string | null): DenyAction {
  if (value !== null) {
    const v = value.toLowerCase();
    if (v === 'ignore' || v === 'warn' || v === 'refuse') return v;
    if (v === 'updateinstead') return 'updateInstead';
  }
  return parseBool(value, key) ? 'refuse' : 'ignore';
}

function int(key: string, value: string | null): number {
  const n = value === null ? undefined : parseConfigInt(value);
  if (n === undefined) throw new PackwrightError('CONFIG_INVALID', `bad numeric config value '${value ?? ''}' for '${key}'`);
  return n;
}

/** receive-pack's settings from git's configuration (receive.*, transfer.*). */
export function receivePackConfig(config: GitConfig): ReceivePackConfig {
  const out: ReceivePackConfig = {
    denyDeletes: false, denyNonFastForwards: false, denyCurrentBranch: 'unconfigured', denyDeleteCurrent: 'unconfigured',
    fsckObjects: false, fsckMessageTypes: '', unpackLimit: 100, maxInputSize: 0,
    advertiseAtomic: true, advertisePushOptions: false, ofsDelta: true, shallowUpdate: false, keepAlive: 5,
    updateServerInfo: false, autoGc: true, hidden: HiddenRefs.fromConfig(config, 'receive'), procReceiveRefs: [], warnings: [],
  };
  let receiveFsck: boolean | undefined;
  let transferFsck: boolean | undefined;
  let receiveLimit: number | undefined;
  let transferLimit: number | undefined;
  const types: string[] = [];
  for (const { key, value } of config.entries) {
    switch (key) {
      case 'receive.denydeletes': out.denyDeletes = parseBool(value, key); break;
      case 'receive.denynonfastforwards': out.denyNonFastForwards = parseBool(value, key); break;
      case 'receive.unpacklimit': receiveLimit = int(key, value); break;
      case 'transfer.unpacklimit': transferLimit = int(key, value); break;
      case 'receive.fsckobjects': receiveFsck = parseBool(value, key); break;
      case 'transfer.fsckobjects': transferFsck = parseBool(value, key); break;
      case 'receive.denycurrentbranch': out.denyCurrentBranch = parseDeny(key, value); break;
      case 'receive.denydeletecurrent': out.denyDeleteCurrent = parseDeny(key, value); break;
      case 'repack.usedeltabaseoffset': out.ofsDelta = parseBool(value, key); break;
      case 'receive.updateserverinfo': out.updateServerInfo = parseBool(value, key); break;
      case 'receive.autogc': out.autoGc = parseBool(value, key); break;
      case 'receive.shallowupdate': out.shallowUpdate = parseBool(value, key); break;
      case 'receive.advertiseatomic': out.advertiseAtomic = parseBool(value, key); break;
      case 'receive.advertisepushoptions': out.advertisePushOptions = parseBool(value, key); break;
      case 'receive.keepalive': out.keepAlive = int(key, value); break;
      case 'receive.maxinputsize': out.maxInputSize = int(key, value); break;
      case 'receive.procreceiverefs':
        if (value === null) throw new PackwrightError('CONFIG_INVALID', `missing value for '${key}'`);
        out.procReceiveRefs.push(value);
        break;
      case 'receive.fsck.skiplist':
        if (value === null) throw new PackwrightError('CONFIG_INVALID', `missing value for '${key}'`);
        types.push(`skiplist=${value}`);
        break;
      default:
        if (!key.startsWith('receive.fsck.') || value === null) break;
        if (isValidFsckMessageType(key.slice(13), value)) types.push(`${key.slice(13)}=${value}`);
        else out.warnings.push(`skipping unknown msg id '${key.slice(13)}'`);
    }
  }
  out.fsckObjects = receiveFsck ?? transferFsck ?? false;
  out.fsckMessageTypes = types.join(',');
  if (transferLimit !== undefined && transferLimit >= 0) out.unpackLimit = transferLimit;
  else if (receiveLimit !== undefined && receiveLimit >= 0) out.unpackLimit = receiveLimit;
  return out;
}
