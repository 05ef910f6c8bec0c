/** Records in the spec's shapes (values after the spec's and extras' examples), for the scripted server. */
export const contract = {
  id: 'CON.F.US.ENQ.H25',
  name: 'ENQH25',
  description: 'E-mini NASDAQ-100: March 2025',
  tickSize: 0.25,
  tickValue: 5,
  activeContract: true,
  symbolId: 'F.US.ENQ',
};

export const order = {
  id: 36598,
  accountId: 704,
  contractId: 'CON.F.US.EP.U25',
  symbolId: 'F.US.EP',
  creationTimestamp: '2025-07-18T21:00:01.268009+00:00',
  updateTimestamp: '2025-07-18T21:00:01.268009+00:00',
  status: 2,
  type: 2,
  side: 0,
  size: 1,
  limitPrice: null,
  stopPrice: null,
  fillVolume: 1,
  filledPrice: 6335.25,
  customTag: 'entry-1',
};

export const openOrder = {
  id: 36599,
  accountId: 704,
  contractId: 'CON.F.US.EP.U25',
  creationTimestamp: '2025-07-18T21:00:01Z',
  updateTimestamp: '2025-07-18T21:00:01Z',
  status: 1,
  type: 1,
  side: 1,
  size: 1,
  limitPrice: 6400.5,
  stopPrice: null,
  filledPrice: null,
};

export const bar = { t: '2025-07-18T21:00:00+00:00', o: 2208.1, h: 2209, l: 2207.75, c: 2208.5, v: 120 };

export const trade = {
  id: 8604,
  accountId: 704,
  contractId: 'CON.F.US.EP.U25',
  creationTimestamp: '2025-01-21T16:13:52.523293+00:00',
  price: 6065.25,
  profitAndLoss: null,
  fees: 1.4,
  side: 1,
  size: 1,
  voided: false,
  orderId: 14328,
};

export const account = {
  id: 704,
  name: 'PRAC-V2-1',
  balance: 50000.5,
  canTrade: true,
  isVisible: true,
  simulated: true,
};

export const position = {
  id: 6124,
  accountId: 704,
  contractId: 'CON.F.US.GMET.J25',
  creationTimestamp: '2025-04-21T19:52:32.175721+00:00',
  type: 1,
  size: 2,
  averagePrice: 1575.75,
};

export const template = {
  id: 12,
  name: '50K Combine',
  title: '50K',
  titleColor: '#ff8800',
  description: 'Fifty thousand combine',
  notes: null,
  startingBalance: 50000,
  margin: 0,
  isActive: true,
  tag: 0,
};

export const user = {
  userName: 'trader1',
  email: 'trader1@example.com',
  userId: 991,
  firstName: 'Ada',
  lastName: 'Lovelace',
  hasSignedAgreements: true,
  createdAt: '2024-05-01T12:00:00.0000000+00:00',
  roles: ['trader'],
};

export const violation = {
  id: 55,
  accountId: 704,
  type: 6,
  duration: 2,
  createdAt: '2025-02-03T15:00:00Z',
  triggeredAt: '2025-02-03T15:00:00Z',
  expiresAt: '2025-02-04T22:00:00Z',
  balance: 48800,
  realizedPnl: -1200,
  unrealizedPnl: 0,
  violationBalance: 48800,
  violationTotalDayPnl: -1200,
  minimumBalance: 48000,
  dailyLossLimit: 1000,
  personalDailyLossLimit: null,
  personalDailyProfitTarget: null,
  voided: false,
  accountName: 'PRAC-V2-1',
  accountType: 1,
  ruleId: 7,
  customViolation: null,
};

export const dailyLossRule = {
  source: 0,
  percentage: null,
  limit: 1000,
  disableBalanceSource: null,
  disableCheckSource: null,
  disablePercentage: null,
  disableLimit: null,
  disableMinimumBalanceSource: null,
  disableMaximumBalanceSource: null,
};

export const maximumLossRule = {
  source: 0,
  percentage: null,
  limit: 2000,
  minimumSource: null,
  maximumSource: 1,
  maximumSourceSpecifiedBalance: null,
};

export function ruleConfiguration(kind: 'daily' | 'maximum' | 'both', ruleId = 7, accountTemplateId = 12) {
  return {
    accountTemplateId,
    ruleId,
    configuration: {
      violationStatus: 1,
      violationDuration: 2,
      liquidateFollowers: null,
      dailyLossLimit: kind === 'maximum' ? null : dailyLossRule,
      maximumLossLimit: kind === 'daily' ? null : maximumLossRule,
      marginScale: null,
    },
  };
}

export function exportedTrade(id: number, createdAt = '2025-01-10T15:00:00Z') {
  return {
    id,
    contractGroupId: 'ES',
    contractGroupName: 'E-mini S&P',
    contractId: 'CON.F.US.EP.H25',
    contractName: 'ESH25',
    tradeDay: '2025-01-10T00:00:00Z',
    createdAt,
    tradeDuration: null,
    price: 6000.25,
    fees: 1.4,
    action: 0,
    lots: 1,
    status: 1,
    pairedTradeId: null,
    pnl: 0,
    tradingAccountId: 704,
    orderId: 100 + id,
    enteredAt: createdAt,
    exitedAt: null,
    entryPrice: 6000.25,
    exitPrice: null,
    voided: false,
    orderCreationDisposition: 0,
  };
}

export const exportedAccount = {
  id: 704,
  accountName: 'PRAC-V2-1',
  nickname: null,
  balance: 50000.123456789,
  unrealizedPnl: 0,
  highestUnrealizedBalance: 50100,
  highestRealizedBalance: 50050,
  realizedDayPnl: 12.5,
  status: 1,
  lockoutExpiration: null,
  tradeLimitExpiration: null,
  dailyTradeLimit: 50,
  weeklyTradeLimit: 200,
  latestTradeDateTime: '2025-02-03T15:00:00Z',
  ineligible: false,
  maximumLossLimit: 2000,
  dailyLossLimit: 1000,
  updatedAt: '2025-02-03T15:00:00Z',
};

export const exportedPosition = {
  id: 31,
  symbolId: 'F.US.EP',
  openPnl: -25,
  positionSize: -2,
  averagePrice: 6001.5,
  contract: 'ESH25',
  contractGroup: 'ES',
  timestamp: '2025-02-03T15:00:00Z',
};

export const tradingAccount = {
  accountName: 'PRAC-V2-1',
  userId: 991,
  startingBalance: 50000,
  balance: 50120.5,
  status: 1,
  marketDataLevel: 1,
  accountId: 704,
  winRate: 0.55,
  profitAndLoss: 120.5,
  startDate: '2025-01-02T00:00:00Z',
  closedDate: '0001-01-01T00:00:00+00:00',
  dailyLoss: 1000,
  maximumLoss: 2000,
  drawDownLimit: 48000,
  maxPositions: 5,
  type: 1,
  startOfDayBalance: 50000,
  combineName: '50K',
  platformId: 3,
  platformAccountId: 'P-704',
  maxMargin: 0,
  realizedDayPnl: 120.5,
  updatedAt: '2025-02-03T15:00:00Z',
  personalDailyLossLimit: 0,
  personalDailyLossLimitAction: 0,
  personalDailyProfitTarget: 0,
  personalDailyProfitTargetAction: 0,
  totalProfit: 300,
  totalLoss: -179.5,
  totalTrades: 10,
  dailyTrades: 2,
  isFollower: false,
  isLeader: false,
  openPnl: 0,
};

export const dayStatistics = {
  tradeDate: '2025-02-03T00:00:00Z',
  totalPnL: 120.5,
  totalTrades: 4,
  winningTrades: 2,
  losingTrades: 1,
  neutralTrades: 1,
  winRate: 0.5,
  totalFees: 5.6,
};

export const dailyStatistics = {
  ...dayStatistics,
  tradeDay: '2025-02-03T00:00:00Z',
  balance: 50120.5,
  products: [{ tradeDay: '2025-02-03T00:00:00Z', symbolId: 'F.US.EP', totalTradedContracts: 4 }],
};

export const ok = { success: true, errorCode: 0, errorMessage: null };
export const exportOk = { success: true, errorMessage: null };
