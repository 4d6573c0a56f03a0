import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('the public entry point', () => {
  it('exports exactly the documented values, and no internal helper', () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        'Agent',
        'ApprovalError',
        'ApprovalRequiredError',
        'AuraError',
        'ChainVerificationError',
        'ConfigError',
        'EnvSecretBroker',
        'ExportError',
        'IdentityRequiredError',
        'InvalidAgentRefError',
        'InvalidOptionError',
        'InvalidSessionIdError',
        'LoopBrokenError',
        'NonJsonValueError',
        'ManualIdentityAdapter',
        'NotFoundError',
        'PolicyDeniedError',
        'ProfileError',
        'PythonNumber',
        'ReadError',
        'SecretNotFoundError',
        'SESSION_MODES',
        'Session',
        'SessionClosedError',
        'SessionLockedError',
        'TrailWriteError',
        'WriteError',
        'agent',
        'canonicalJson',
        'configure',
        'currentConfig',
        'parseAgentRef',
        'readTrail',
        'verifyTrail',
      ].sort(),
    );
  });

  it('gives every error class a stable code and its own name', () => {
    const error = new api.SessionClosedError('aura_sess_0123456789ab', 'emit');
    expect(error).toBeInstanceOf(api.AuraError);
    expect(error.name).toBe('SessionClosedError');
    expect(error.code).toBe('SESSION_CLOSED');
    expect(error.data).toEqual({ session_id: 'aura_sess_0123456789ab' });
  });
});
