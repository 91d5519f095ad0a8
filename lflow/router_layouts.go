package lflow

// The logical router stages of each supported series, as northd.h's
// PIPELINE_STAGES (ROUTER half) lists them at the series' newest tag (at
// 26.09.0's lflow-list for 26.09, whose tag the fetched upstream lacks).
// Stages that came within a series by a backport are listed here and
// dropped for the versions before it by their release fact
// (compile.RouterLayout): lr_in_network_id (24.03.6, 25.03.1) and
// lr_in_ecmp_stateful_egr (25.03.3, 25.09.3).
var (
	routers2303 = []RouterStage{
		LRInAdmission, LRInLookupNeighbor, LRInLearnNeighbor, LRInIPInput,
		LRInUnsnat, LRInDefrag, LRInLBAffCheck, LRInDNAT, LRInLBAffLearn,
		LRInECMPStateful, LRInNDRAOptions, LRInNDRAResponse, LRInIPRoutingPre,
		LRInIPRouting, LRInIPRoutingECMP, LRInPolicy, LRInPolicyECMP,
		LRInARPResolve, LRInChkPktLen, LRInLargerPkts, LRInGWRedirect,
		LRInARPRequest,
		LROutChkDNATLocal, LROutUndnat, LROutPostUndnat, LROutSNAT,
		LROutPostSNAT, LROutEgrLoop, LROutDelivery,
	}

	routers2403 = []RouterStage{
		LRInAdmission, LRInLookupNeighbor, LRInLearnNeighbor, LRInIPInput,
		LRInUnsnat, LRInDefrag, LRInLBAffCheck, LRInDNAT, LRInLBAffLearn,
		LRInECMPStateful, LRInNDRAOptions, LRInNDRAResponse, LRInIPRoutingPre,
		LRInIPRouting, LRInIPRoutingECMP, LRInPolicy, LRInPolicyECMP,
		LRInARPResolve, LRInChkPktLen, LRInLargerPkts, LRInGWRedirect,
		LRInNetworkID, LRInARPRequest,
		LROutChkDNATLocal, LROutUndnat, LROutPostUndnat, LROutSNAT,
		LROutPostSNAT, LROutEgrLoop, LROutDelivery,
	}

	routers2503 = []RouterStage{
		LRInAdmission, LRInLookupNeighbor, LRInLearnNeighbor, LRInIPInput,
		LRInDHCPRelayReq, LRInUnsnat, LRInPostUnsnat, LRInDefrag,
		LRInLBAffCheck, LRInDNAT, LRInLBAffLearn, LRInECMPStateful,
		LRInNDRAOptions, LRInNDRAResponse, LRInIPRoutingPre, LRInIPRouting,
		LRInIPRoutingECMP, LRInPolicy, LRInPolicyECMP, LRInDHCPRelayRespChk,
		LRInDHCPRelayResp, LRInARPResolve, LRInChkPktLen, LRInLargerPkts,
		LRInGWRedirect, LRInNetworkID, LRInARPRequest, LRInECMPStatefulEgr,
		LROutChkDNATLocal, LROutUndnat, LROutPostUndnat, LROutSNAT,
		LROutPostSNAT, LROutEgrLoop, LROutDelivery,
	}

	// routers2509 is also 26.03's and 26.09's.
	routers2509 = []RouterStage{
		LRInAdmission, LRInLookupNeighbor, LRInLearnNeighbor, LRInIPInput,
		LRInDHCPRelayReq, LRInUnsnat, LRInPostUnsnat, LRInDefrag,
		LRInCtExtract, LRInLBAffCheck, LRInDNAT, LRInLBAffLearn,
		LRInECMPStateful, LRInNDRAOptions, LRInNDRAResponse, LRInIPRoutingPre,
		LRInIPRouting, LRInIPRoutingECMP, LRInPolicy, LRInPolicyECMP,
		LRInDHCPRelayRespChk, LRInDHCPRelayResp, LRInARPResolve,
		LRInChkPktLen, LRInLargerPkts, LRInGWRedirect, LRInNetworkID,
		LRInARPRequest, LRInECMPStatefulEgr,
		LROutChkDNATLocal, LROutUndnat, LROutPostUndnat, LROutSNAT,
		LROutPostSNAT, LROutEgrLoop, LROutDelivery,
	}
	routers2603 = routers2509
	routers2609 = routers2509
)
